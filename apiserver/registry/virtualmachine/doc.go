// Package virtualmachine is the REST storage of virtualmachines and
// virtualmachines/status. It works on the internal types and must not import
// any client.
package virtualmachine
