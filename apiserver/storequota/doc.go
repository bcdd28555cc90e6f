// Package storequota warns before the platform's etcd refuses writes.
//
// etcd raises its NOSPACE alarm once its database file reaches the quota
// (--quota-backend-bytes; the HA store's and the embedded store's are
// 512 MiB) and from then on answers every write with "etcdserver: mvcc:
// database space exceeded" until an operator compacts, defragments and
// disarms the alarm (docs/runbooks.md). Nothing a tenant does can undo
// that, and every VMI status write fails meanwhile. So virt-apiserver asks
// each member for its Status and the cluster for its alarms every minute,
// and warns, in its log and as a Warning event on its pod, when a member's
// database reaches 80 % of the quota, and when an alarm is raised: the
// warning says whether a defragmentation would give the space back (the
// file is much larger than the data in it) or the data itself grew.
//
// Assess is the decision, a pure function; Watcher polls a live etcd and
// hands each change of the assessment (and a reminder every 10 minutes
// while it is not OK) to its Emit function.
package storequota
