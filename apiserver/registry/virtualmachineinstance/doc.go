// Package virtualmachineinstance is the REST storage of
// virtualmachineinstances and virtualmachineinstances/status: how an object
// is prepared, validated, selected and printed before it reaches etcd.
// It works on the internal types and must not import any client.
package virtualmachineinstance
