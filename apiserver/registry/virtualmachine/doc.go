// Package virtualmachine is the REST storage of virtualmachines,
// virtualmachines/status and the VM's lifecycle actions (virtualmachines/
// start, stop and restart): they change the run strategy or ask the VM
// controller for a start or stop (status.stateChangeRequests), and reach the
// VM's instance only through the VMI storage handed to them (Instances);
// and virtualmachines/expand-spec. A VM that references an instancetype or
// a preference is validated, and expanded, through the Expander handed to
// it. It works on the internal types and must not import any client.
package virtualmachine
