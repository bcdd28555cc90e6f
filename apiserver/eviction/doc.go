// Package eviction is the pods/eviction admission webhook virt-apiserver
// serves: it turns the eviction of a launcher pod (kubectl drain, the
// descheduler, any API-initiated eviction) into an evacuation of its VMI.
//
// For a VMI whose guest should move (evictionStrategy LiveMigrate, or
// LiveMigrateIfPossible and migratable, or External), the webhook marks the
// VMI with status.evacuationNodeName and answers 429, which the evicting
// client retries; virt-controller's migration controller creates the
// evacuation migration, and once the migration has removed the source pod
// the retried eviction finds nothing left to evict. The decision is Decide,
// a pure function; the handler only reads the pod and the VMI and writes the
// one field. docs/migration.md ("Drains") says why a webhook and not a
// PodDisruptionBudget per VMI.
package eviction
