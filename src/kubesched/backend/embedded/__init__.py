"""The embedded in-memory cluster `simulate` runs on: the object store's API (cluster.py), the PV controller and
provisioner (pv_controller.py) and kube-controller-manager's workload and claim controllers (controllers/).

It sits above the API server stand-in (kubesched.apiserver), whose checks admit what its controllers create,
and below the simulator, which it does not import. This package module imports nothing, so importing one of
its modules never loads the others.
"""
