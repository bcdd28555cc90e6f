// Package virtualmachineinstancereplicaset is the REST storage of
// virtualmachineinstancereplicasets, their /status, and their /scale: an
// autoscaling/v1 Scale view of spec.replicas, status.replicas and the
// selector, which `kubectl scale` and the HorizontalPodAutoscaler read and
// write. Creating and deleting the instances is virt-controller's
// (controllers/replicaset); the server only stores what is asked.
//
// It works on the internal types and must not import any client.
package virtualmachineinstancereplicaset
