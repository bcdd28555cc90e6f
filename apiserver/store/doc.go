// Package store is the operator's side of virt-apiserver's store, in either
// mode (docs/cluster.md "Backup and restore"): a backup is an etcd snapshot
// taken through the client API (Maintenance.Snapshot) with its metadata
// beside it; a restore verifies a snapshot, hands it to the store's own pod
// (Stage, run there by exec) and restarts the pod, whose embedded etcd puts
// it in place before it serves (apiserver/etcd, restore.go) and keeps the
// old data until the new store proved itself.
//
// It runs as `virt-apiserver store ...`: the binary that owns the store
// carries its operations, and the same image runs the step inside the pod.
// It reaches the cluster with client-go (port-forward, exec, scale); the
// import rules are apiserver's (package apiserver's doc).
package store
