package debian

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/rawguest"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/launcher/kvm"
)

// Env is the cluster and the guest's files.
type Env struct {
	Kube kubernetes.Interface
	Virt virtclient.Interface
	// VMFile is the example VM whose template both sides boot
	// (artifacts/examples/vm-debian.yaml).
	VMFile string
	// Image is the Debian image (hack/build-debian-image.sh's disk.qcow2)
	// the raw side's overlays are over: the disk the platform's
	// containerDisk image (localhost/debian-disk:dev) carries.
	Image string
	Logf  func(string, ...any)
}

// Options bound the run.
type Options struct {
	// Runs is the boots per side; the sides alternate.
	Runs int
	// Timeout bounds each boot's way to the first login.
	Timeout time.Duration
}

// bootFunc is one side's way to boot the guest once: the i-th boot of the side.
type bootFunc func(ctx context.Context, i int) (Boot, error)

// Run boots the guest o.Runs times on each side, one guest at a time and
// the sides in alternation, and removes every VMI, the namespace and each
// raw guest with its network whatever happens.
func Run(ctx context.Context, env Env, o Options) (res *Result, err error) {
	guest, err := ReadGuest(env.VMFile)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(env.Image); err != nil {
		return nil, fmt.Errorf("the Debian image for raw libvirt: %w", err)
	}
	if err := namespace.Create(ctx, env.Kube, Namespace); err != nil {
		return nil, err
	}
	defer func() {
		cleanup := context.WithoutCancel(ctx)
		_ = env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).DeleteCollection(cleanup, metav1.DeleteOptions{}, metav1.ListOptions{})
		err = errors.Join(err, namespace.Delete(cleanup, env.Kube, 5*time.Minute, Namespace))
	}()
	env.Logf("debian: %d boots per side of %s (user %s, %s), alternating, one at a time; each until the first SSH login",
		o.Runs, env.VMFile, guest.User, guest.Memory())
	boots := map[string]bootFunc{
		Platform: func(ctx context.Context, i int) (Boot, error) {
			return bootPlatform(ctx, env, guest, fmt.Sprintf("debian-%d", i+1), o.Timeout)
		},
		Raw: func(ctx context.Context, i int) (Boot, error) {
			return bootRaw(ctx, env, guest, fmt.Sprintf("debian-raw-%d", i+1), o.Timeout)
		},
	}
	runs, err := measure(ctx, o.Runs, boots, func(r Boot) {
		env.Logf("debian: %s: Running after %s, SSH after %s (%d probes)", r.Side, r.Running.Round(10*time.Millisecond), r.SSH.Round(10*time.Millisecond), r.Probes)
	})
	if err != nil {
		return nil, err
	}
	res = &Result{Namespace: Namespace, Image: env.Image, Memory: guest.Memory(), RunsPerSide: o.Runs, Boots: runs, Rows: summarize(runs)}
	res.Notes = append(notes(guest), fmt.Sprintf("the image: %s, raw libvirt's backing file; the platform's containerDisk localhost/debian-disk:dev carries it as /disk/disk.qcow2 when it was imported from the same build (hack/cluster/guest-images.sh)", env.Image))
	if x, ok := res.Ratio(); ok {
		p, _ := res.Row(Platform)
		q, _ := res.Row(Raw)
		env.Logf("debian: SSH-ready medians: platform %s, raw libvirt %s (%+.1f s, %.2fx)",
			p.SSHMedian.Round(100*time.Millisecond), q.SSHMedian.Round(100*time.Millisecond), (p.SSHMedian - q.SSHMedian).Seconds(), x)
	}
	return res, nil
}

// measure runs n rounds; each boots every side once, in order(i). The
// first failure ends it.
func measure(ctx context.Context, n int, boots map[string]bootFunc, done func(Boot)) ([]Boot, error) {
	var runs []Boot
	for i := range n {
		for _, side := range order(i) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r, err := boots[side](ctx, i)
			if err != nil {
				return nil, fmt.Errorf("%s, boot %d: %w", side, i+1, err)
			}
			r.Side = side
			done(r)
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// notes say how the two sides differ beyond what is measured.
func notes(guest Guest) []string {
	typ := "qemu (software emulation, TCG)"
	if ok, _ := kvm.Usable(); ok {
		typ = "kvm"
	}
	return []string{
		fmt.Sprintf("both: the template of the example VM (vm-debian), %s, the bench's ed25519 key in place of the example's in the cloud-init user data; login as %s with that key and `true`, from the node as root, tried every %s (TCP connect bounded by %s) until one succeeds; the guest's host keys are made at its first boot and any is accepted; domain type %s",
			guest.Memory(), guest.User, ProbeInterval, ConnectTimeout, typ),
		"platform: from the POST; Running from a watch opened before it; logins at `status.interfaces[0].ipAddress` (the pod's IP, through the masquerade binding) once Running; each VMI deleted, and waited for until it and its pod are gone, before the next boot",
		fmt.Sprintf("raw libvirt: from the define; before it, untimed: the plain tap (bridge %s with the launcher's DHCP server, lease %s, no DNS server; veth %s %s, host route, no NAT), the guest's files made by the launcher's own `disk.Prepare` (a qcow2 overlay over the image, the NoCloud ISO), the domain XML of `launcher/domain.Convert`, and a `qemu:///embed` libvirt in a child process at nice 0 with QEMU's capabilities probed; Running is libvirt's start returning",
			Addresses.Gateway, Addresses.Guest.Addr(), Addresses.HostLink, Addresses.Host),
		fmt.Sprintf("the plain tap's links have MTU %d, the pod network's", rawguest.LinkMTU),
	}
}
