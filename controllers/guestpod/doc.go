// Package guestpod is virt-controller's controller of the readiness gate
// GuestInPodCondition that every launcher pod carries (controllers/
// launcherpod): True on the one pod of a Running VMI whose QEMU runs the
// guest, False on every other pod of the VMI. A pod is Ready only with its
// gate True, so a Service sends a guest's traffic only to the pod the guest
// is in: not to a migration's target pod before the switch-over (its
// launcher is up, its QEMU waits for the incoming guest), not to the source
// pod after it (docs/migration.md).
//
// The pod the guest is in follows from the VMI's status alone: its
// migrationState's target pod once that migration completed, its source
// pod while one runs or after one failed, else its one launcher pod on
// status.nodeName. The controller writes only that condition of launcher
// pods' status (RBAC: patch of pods/status) and reads VMIs and launcher
// pods through the informers it shares with the VMI controller.
package guestpod
