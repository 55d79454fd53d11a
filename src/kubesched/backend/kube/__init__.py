"""Running against a real Kubernetes API server: client, informers, writes, leader election."""
