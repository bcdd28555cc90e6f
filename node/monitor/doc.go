// Package monitor keeps virt-handler in touch with the launchers on its
// node: one gRPC connection per launcher pod, dialed through the pod's
// socket on the host (node/podfs: no symlink, a socket served by the
// launchers' uid), a version check through Info, and a
// WatchDomain stream that is re-opened with back-off whenever it breaks. It
// caches the newest domain each launcher reported and calls back with the
// VMI's key whenever that changes, so the controller syncs on news instead of
// polling. It also carries the unary calls the controller makes (Sync,
// Shutdown) and the guest actions of node/guestaccess (Pause, Unpause,
// SoftReboot), with timeouts and retries of transient failures, and reads
// the final-state file a launcher leaves behind
// (launcher/layout.FinalStateFile), capped and confined by node/podfs.
//
// It speaks launcher/api/v1 only; it knows nothing of informers or of how a
// domain maps to a VMI's status.
package monitor
