// Package virtualmachineinstance is the REST storage of
// virtualmachineinstances and virtualmachineinstances/status: how an object
// is prepared, validated, selected and printed before it reaches etcd; and
// the one change of a VMI's spec the server itself makes, a shorter grace
// period for the VM's stop and restart (SetTerminationGracePeriod).
// It works on the internal types and must not import any client.
package virtualmachineinstance
