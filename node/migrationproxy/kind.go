package migrationproxy

import (
	"fmt"
	"strconv"

	"kubevirt.dev/virt/launcher/layout"
)

// Kind is one of a migration's connections: its socket in both pods and
// its tag in migrationState.targetDirectMigrationNodePorts.
type Kind int

const (
	// Libvirt is the source libvirt's connection to the target libvirtd
	// (peer to peer).
	Libvirt Kind = iota
	// QEMU is QEMU's migration stream.
	QEMU
	// Block is the block copy (NBD) of pod-local writable disks.
	Block
)

// Kinds are all kinds, in the order of their tags.
var Kinds = []Kind{Libvirt, QEMU, Block}

// Socket is the kind's socket name in layout.MigrationDirName.
func (k Kind) Socket() string {
	switch k {
	case Libvirt:
		return layout.MigrationLibvirtSocketName
	case QEMU:
		return layout.MigrationQEMUSocketName
	case Block:
		return layout.MigrationBlockSocketName
	}
	return ""
}

// Tag is the kind's value in targetDirectMigrationNodePorts (KubeVirt's
// convention: 0 for libvirt, the ports QEMU's stream and the block copy
// would have without a proxy).
func (k Kind) Tag() int {
	switch k {
	case QEMU:
		return 49152
	case Block:
		return 49153
	}
	return 0
}

// protocol is the kind's ALPN protocol.
func (k Kind) protocol() string { return "kubevirt-migration-" + k.String() }

func (k Kind) String() string {
	switch k {
	case Libvirt:
		return "libvirt"
	case QEMU:
		return "qemu"
	case Block:
		return "block"
	}
	return "kind" + strconv.Itoa(int(k))
}

// KindOfTag is the kind of a targetDirectMigrationNodePorts value.
func KindOfTag(tag int) (Kind, error) {
	for _, k := range Kinds {
		if k.Tag() == tag {
			return k, nil
		}
	}
	return 0, fmt.Errorf("no migration connection is tagged %d", tag)
}

// Ports turns the listeners' ports by kind into
// targetDirectMigrationNodePorts: {"<port>": tag}.
func Ports(ports map[Kind]int) map[string]int {
	out := make(map[string]int, len(ports))
	for k, p := range ports {
		out[strconv.Itoa(p)] = k.Tag()
	}
	return out
}

// ParsePorts is the inverse of Ports: the target's port of each kind, all
// three required.
func ParsePorts(ports map[string]int) (map[Kind]int, error) {
	out := make(map[Kind]int, len(Kinds))
	for p, tag := range ports {
		port, err := strconv.Atoi(p)
		if err != nil || port <= 0 || port > 65535 {
			return nil, fmt.Errorf("target port %q is not a port", p)
		}
		k, err := KindOfTag(tag)
		if err != nil {
			return nil, err
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("two target ports of the %s connection", k)
		}
		out[k] = port
	}
	for _, k := range Kinds {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("no target port of the %s connection (tag %d)", k, k.Tag())
		}
	}
	return out, nil
}
