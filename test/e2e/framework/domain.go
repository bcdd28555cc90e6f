package framework

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"libvirt.org/go/libvirtxml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/layout"
)

// liveDomainTimeout bounds the wait for libvirt's status file of a domain
// the launcher was told to start: it is written as QEMU starts.
const liveDomainTimeout = time.Minute

// domstatus is libvirt's status file of a running domain: the live domain
// (with everything libvirt filled in, such as the machine's full name)
// wrapped in the driver's private state.
type domstatus struct {
	Domain libvirtxml.Domain `xml:"domain"`
}

// LiveDomainPath is where the embedded libvirt of a VMI's launcher pod keeps
// the live XML of its running domain, on this node: in the pod's private
// emptyDir, below the libvirt root, as run/qemu/<domain name>.xml.
func (c *Cluster) LiveDomainPath(pod *corev1.Pod, vmi *virtv1.VirtualMachineInstance) string {
	root := layout.LibvirtRoot(layout.HostPrivateDir(c.KubeletRoot, string(pod.UID)))
	return filepath.Join(root, "run", "qemu", domain.Name(vmi.Namespace, vmi.Name, vmi.UID)+".xml")
}

// LiveDomain waits for and returns the libvirt domain a VMI runs as: what
// libvirt started QEMU with, not what the API asked for. An operator reads
// the same with virsh dumpxml; the embedded libvirt has no daemon to ask, so
// its status file is read instead.
func (c *Cluster) LiveDomain(ctx context.Context, pod *corev1.Pod, vmi *virtv1.VirtualMachineInstance) (*libvirtxml.Domain, error) {
	path := c.LiveDomainPath(pod, vmi)
	var status domstatus
	err := WaitFor(ctx, liveDomainTimeout, "libvirt's live domain "+path, func(context.Context) (bool, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return false, err
		}
		// libvirt replaces the file by a rename: a read sees all of it.
		if err := xml.Unmarshal(data, &status); err != nil {
			return false, fmt.Errorf("parse: %w", err)
		}
		return status.Domain.Name != "", nil
	})
	if err != nil {
		return nil, err
	}
	return &status.Domain, nil
}

// DomainMemoryBytes is a domain's memory in bytes, in whichever of
// libvirt's units it is written.
func DomainMemoryBytes(d *libvirtxml.Domain) (uint64, error) {
	if d.Memory == nil {
		return 0, fmt.Errorf("domain %s has no <memory>", d.Name)
	}
	scale := map[string]uint64{
		"b": 1, "bytes": 1,
		"": 1 << 10, "k": 1 << 10, "kib": 1 << 10, "kb": 1000,
		"m": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000,
	}
	s, ok := scale[strings.ToLower(d.Memory.Unit)]
	if !ok {
		return 0, fmt.Errorf("domain %s: memory unit %q", d.Name, d.Memory.Unit)
	}
	return uint64(d.Memory.Value) * s, nil
}
