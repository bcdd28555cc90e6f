package debian

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/rawguest"
	"kubevirt.dev/virt/launcher/disk"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/layout"
)

// Addresses of the raw side's plain tap: only 198.19.251.0/30 and
// 198.19.252.0/24, in the benchmarking block 198.18.0.0/15 and apart from
// part 6's, so that the two parts' tests may run at once.
var Addresses = rawguest.Addresses{
	HostLink: "vb-deb0",
	Host:     netip.MustParsePrefix("198.19.251.1/30"),
	Uplink:   netip.MustParsePrefix("198.19.251.2/30"),
	Gateway:  netip.MustParsePrefix("198.19.252.1/24"),
	Guest:    netip.MustParsePrefix("198.19.252.2/24"),
}

// guestMAC is the raw guest's NIC's address (locally administered).
const guestMAC = "02:62:65:6e:00:07"

// rawHost is the launcher's domain.Host for a guest whose files are in
// dir, its one interface on the plain tap: the launcher's serial, VNC and
// firmware choices, and its disks as disk.Prepare made them.
func rawHost(vmi *virtv1.VirtualMachineInstance, dir, typ string, disks map[string]domain.Disk) (domain.Host, error) {
	ifaces := vmi.Spec.Domain.Devices.Interfaces
	if len(ifaces) != 1 {
		return domain.Host{}, fmt.Errorf("the guest has %d interfaces: the plain tap is for one", len(ifaces))
	}
	return domain.Host{
		Type: typ, Disks: disks,
		SerialSocket: filepath.Join(dir, "serial0.sock"), SerialLog: filepath.Join(dir, "serial0.log"),
		VNCSocket:  filepath.Join(dir, "vnc.sock"),
		EFI:        domain.DebianOVMF,
		Interfaces: map[string]domain.Interface{ifaces[0].Name: {Tap: rawguest.TapName, MAC: guestMAC, MTU: rawguest.LinkMTU}},
	}, nil
}

// prepareDisks makes the guest's files in dir with the launcher's own
// code (disk.Prepare): each containerDisk volume's qcow2 overlay over
// image, which this process's root holds as a container disk's container
// does (its record names this process), and the cloudInitNoCloud
// volume's NoCloud ISO.
func prepareDisks(vmi *virtv1.VirtualMachineInstance, dir, image string) (map[string]domain.Disk, error) {
	image, err := filepath.Abs(image)
	if err != nil {
		return nil, err
	}
	disksDir := filepath.Join(dir, "disks")
	rec, err := json.Marshal(layout.ContainerDisk{PID: os.Getpid(), Path: image})
	if err != nil {
		return nil, err
	}
	for _, v := range vmi.Spec.Volumes {
		if v.ContainerDisk == nil {
			continue
		}
		path := layout.ContainerDiskRecord(disksDir, v.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, rec, 0o644); err != nil {
			return nil, err
		}
	}
	disks, err := disk.Prepare(vmi, disk.Dirs{Disks: disksDir})
	if err != nil {
		return nil, fmt.Errorf("the raw guest's volumes: %w", err)
	}
	return disks, nil
}

// rawDomain prepares the guest's files in dir and converts vmi with them
// (launcher/domain), as the launcher would in its pod.
func rawDomain(vmi *virtv1.VirtualMachineInstance, dir, typ, image string) (name, xml, serialLog string, err error) {
	disks, err := prepareDisks(vmi, dir, image)
	if err != nil {
		return "", "", "", err
	}
	host, err := rawHost(vmi, dir, typ, disks)
	if err != nil {
		return "", "", "", err
	}
	d, err := domain.Convert(vmi, host)
	if err != nil {
		return "", "", "", fmt.Errorf("the raw guest's domain: %w", err)
	}
	if xml, err = d.Marshal(); err != nil {
		return "", "", "", fmt.Errorf("the raw guest's domain: %w", err)
	}
	return d.Name, xml, host.SerialLog, nil
}

// rawVMI is the guest as the API would store it: defaulted, with a UID
// (cloud-init's instance ID).
func rawVMI(guest Guest, name string) *virtv1.VirtualMachineInstance {
	vmi := guest.VMI(Namespace, name)
	vmi.UID = uuid.NewUUID()
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	return vmi
}

// bootRaw boots the guest under raw libvirt on a plain tap of its own and
// times it from the define to libvirt's start returning and to the first
// login at the guest's lease. Untimed before: the network, the overlay and
// the ISO, the domain XML, and the child's libvirt with QEMU probed. The
// guest, its libvirt and its network are removed whatever happens.
func bootRaw(ctx context.Context, env Env, guest Guest, name string, timeout time.Duration) (run Boot, err error) {
	n, err := rawguest.NewNet(Addresses)
	if err != nil {
		return run, err
	}
	defer func() { err = errors.Join(err, n.Close()) }()
	if err := n.AddTap(); err != nil {
		return run, err
	}
	if err := n.ServeDHCP(ctx, guestMAC, name); err != nil {
		return run, err
	}
	g, err := rawguest.New("vb-deb-")
	if err != nil {
		return run, err
	}
	// Before the network's Close: QEMU must let go of the tap first.
	defer func() { err = errors.Join(err, g.Stop()) }()
	domName, xml, serialLog, err := rawDomain(rawVMI(guest, name), g.Dir, g.DomainType, env.Image)
	if err != nil {
		return run, err
	}
	if err := g.Launch(ctx, n, domName, xml, timeout); err != nil {
		return run, err
	}
	run = Boot{Side: Raw}
	start := time.Now()
	if err := g.Boot(ctx, timeout); err != nil {
		return run, err
	}
	run.Running = time.Since(start)
	alive := func() error {
		select {
		case <-g.Exited():
			return fmt.Errorf("raw libvirt exited (%v): %s", g.ExitErr(), g.ChildLog(600))
		default:
			return nil
		}
	}
	addr := net.JoinHostPort(Addresses.Guest.Addr().String(), "22")
	p, err := waitLogin(ctx, addr, guest.User, guest.Signer, start, timeout-time.Since(start), alive)
	if err != nil {
		return run, fmt.Errorf("raw guest %s (leased: %v; serial log ends %q): %w", domName, n.Leased(), tailFile(serialLog, 400), err)
	}
	run.SSH, run.Probes = p.ready, p.attempts
	return run, nil
}

// tailFile is the end of a file, for error messages.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
