// Package migration is virt-controller's side of live migration: it carries
// out each VirtualMachineInstanceMigration (the target launcher pod, the
// hand-over of the target to its node through the VMI's
// status.migrationState, the phases, the limits on parallel migrations with
// evacuations first, the timeouts, cancellation), creates the evacuation
// migrations that a drain asks for through status.evacuationNodeName, and
// removes the losing launcher pod when a migration ends.
//
// The nodes' virt-handlers do the migration itself; this package writes
// only the VMI fields the ownership table gives virt-controller
// (docs/migration.md, docs/ownership.md). Rendering the target pod is
// controllers/launcherpod's.
package migration
