"""The in-tree registry (framework/plugins/registry.go)."""

from __future__ import annotations

from kubesched.config import names
from kubesched.framework.plugins.defaultbinder import default_binder
from kubesched.framework.plugins.defaultpreemption import default_preemption
from kubesched.framework.plugins.dynamicresources import dynamic_resources
from kubesched.framework.plugins.gangscheduling import gang_scheduling
from kubesched.framework.plugins.imagelocality import image_locality
from kubesched.framework.plugins.interpodaffinity import plugin as interpodaffinity
from kubesched.framework.plugins.nodeaffinity import node_affinity
from kubesched.framework.plugins.nodedeclaredfeatures import node_declared_features
from kubesched.framework.plugins.nodelabel import node_label
from kubesched.framework.plugins.nodename import node_name
from kubesched.framework.plugins.nodeports import node_ports
from kubesched.framework.plugins.nodepreferavoidpods import node_prefer_avoid_pods
from kubesched.framework.plugins.noderesources import balanced_allocation, fit, legacy_allocated
from kubesched.framework.plugins.nodeunschedulable import node_unschedulable
from kubesched.framework.plugins.nodevolumelimits import csi, non_csi
from kubesched.framework.plugins.podgrouppodscount import pod_group_pods_count
from kubesched.framework.plugins.podtopologyspread import plugin as podtopologyspread
from kubesched.framework.plugins.queuesort import priority_sort
from kubesched.framework.plugins.schedulinggates import scheduling_gates
from kubesched.framework.plugins.selectorspread import selector_spread
from kubesched.framework.plugins.serviceaffinity import service_affinity
from kubesched.framework.plugins.tainttoleration import taint_toleration
from kubesched.framework.plugins.topologyaware import topology_placement
from kubesched.framework.plugins.volumebinding import volume_binding
from kubesched.framework.plugins.volumerestrictions import volume_restrictions
from kubesched.framework.plugins.volumezone import volume_zone
from kubesched.framework.runtime.registry import Registry
from kubesched.release import DEFAULT, Release


def new_in_tree_registry(release: Release = DEFAULT) -> Registry:
    """The plugins `release` has; which variant of a plugin it has is the plugin's own `new` to choose."""
    r = Registry()
    r.register(names.SCHEDULING_GATES, scheduling_gates.new)
    r.register(names.PRIORITY_SORT, priority_sort.new)
    r.register(names.NODE_UNSCHEDULABLE, node_unschedulable.new)
    r.register(names.NODE_NAME, node_name.new)
    r.register(names.TAINT_TOLERATION, taint_toleration.new)
    r.register(names.NODE_AFFINITY, node_affinity.new)
    r.register(names.NODE_PORTS, node_ports.new)
    r.register(names.NODE_RESOURCES_FIT, fit.new)
    r.register(names.POD_TOPOLOGY_SPREAD, podtopologyspread.new)
    r.register(names.INTER_POD_AFFINITY, interpodaffinity.new)
    r.register(names.NODE_RESOURCES_BALANCED_ALLOCATION, balanced_allocation.new)
    r.register(names.IMAGE_LOCALITY, image_locality.new)
    r.register(names.VOLUME_RESTRICTIONS, volume_restrictions.new)
    r.register(names.NODE_VOLUME_LIMITS, csi.new)
    r.register(names.VOLUME_BINDING, volume_binding.new)
    r.register(names.VOLUME_ZONE, volume_zone.new)
    r.register(names.DEFAULT_BINDER, default_binder.new)
    r.register(names.DEFAULT_PREEMPTION, default_preemption.new)
    r.register(names.DYNAMIC_RESOURCES, dynamic_resources.new)
    if release.has_node_declared_features:
        r.register(names.NODE_DECLARED_FEATURES, node_declared_features.new)
    # Workload-aware scheduling (alpha): in the default set only when their gates are on. GangScheduling
    # is in v1.35's registry too, the placement plugins only in v1.36's.
    if release.number >= (1, 35):
        r.register(names.GANG_SCHEDULING, gang_scheduling.new)
    if release.placement_points:
        r.register(names.TOPOLOGY_PLACEMENT_GENERATOR, topology_placement.new)
        r.register(names.POD_GROUP_PODS_COUNT, pod_group_pods_count.new)
    # Removed upstream; a v1 configuration cannot enable them, a translated Policy can.
    r.register(names.SELECTOR_SPREAD, selector_spread.new)
    r.register(names.NODE_LABEL, node_label.new)
    r.register(names.SERVICE_AFFINITY, service_affinity.new)
    r.register(names.NODE_PREFER_AVOID_PODS, node_prefer_avoid_pods.new)
    r.register(names.NODE_RESOURCES_LEAST_ALLOCATED, legacy_allocated.new_least_allocated)
    r.register(names.NODE_RESOURCES_MOST_ALLOCATED, legacy_allocated.new_most_allocated)
    r.register(names.REQUESTED_TO_CAPACITY_RATIO, legacy_allocated.new_requested_to_capacity_ratio)
    r.register(names.EBS_LIMITS, non_csi.new_ebs)
    r.register(names.GCE_PD_LIMITS, non_csi.new_gce_pd)
    r.register(names.AZURE_DISK_LIMITS, non_csi.new_azure_disk)
    r.register(names.CINDER_LIMITS, non_csi.new_cinder)
    return r
