// Package virtualmachineinstancemigration is the REST storage of
// virtualmachineinstancemigrations and their /status. A migration is
// accepted only for a VMI that can move now (it exists, is Running on its
// node, is not known to be unmigratable, and has no other unfinished
// migration): the strategy reads the VMI and the other migrations from this
// server's own storage. Carrying the migration out is virt-controller's
// (controllers/migration); the server only stores what is asked.
//
// It works on the internal types and must not import any client.
package virtualmachineinstancemigration
