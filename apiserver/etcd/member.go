package etcd

import (
	"net/url"
	"strconv"
)

// The embedded store's member identity: one definition, used to start it
// (Start) and to restore a snapshot into it (restore.go). A restored data
// directory must carry the identity the member then starts with, or etcd
// refuses it (another cluster ID) or starts a second cluster beside it.
const (
	// MemberName is the embedded etcd's one member.
	MemberName = "virt-apiserver"
	// ClusterToken is the token its cluster was bootstrapped with: etcd's
	// default, which every embedded store so far was created with.
	ClusterToken = "etcd-cluster"
)

// PeerURL is the member's peer URL for peerPort: loopback, never dialled
// by another member.
func PeerURL(peerPort int) url.URL { return loopbackURL(peerPort) }

// InitialCluster is the member list of the embedded store: itself alone.
func InitialCluster(peerPort int) string {
	u := PeerURL(peerPort)
	return MemberName + "=" + u.String()
}

func loopbackURL(port int) url.URL {
	return url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(port)}
}

// The HA mode's etcd cluster (artifacts/etcd): HAMembers members of the
// StatefulSet HAService, each named after its pod and found by the headless
// Service's name of it. artifacts/etcd/statefulset.yaml passes the same to
// etcd as flags; member_test.go holds the two together.
const (
	HAService      = "virt-etcd"
	HANamespace    = "virt-system"
	HAMembers      = 3
	HAClusterToken = "virt-etcd"
)

// HAMemberName is the i-th member's name (its pod's).
func HAMemberName(i int) string { return HAService + "-" + strconv.Itoa(i) }

// HAPeerURL is a member's peer URL.
func HAPeerURL(name string) string {
	return "https://" + name + "." + HAService + "." + HANamespace + ".svc:2380"
}

// HAInitialCluster is the HA cluster's member list.
func HAInitialCluster() string {
	s := ""
	for i := range HAMembers {
		if i > 0 {
			s += ","
		}
		name := HAMemberName(i)
		s += name + "=" + HAPeerURL(name)
	}
	return s
}
