package network

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/rawguest"
	"kubevirt.dev/virt/bench/startup"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/test/e2e/framework"
)

// Untimed transfers per path before the measured ones (the guest's first
// answers, the host's ARP and route caches).
const (
	WarmupDownloads = 1
	WarmupRequests  = 10
)

// Env is the cluster and the guest's files.
type Env struct {
	Kube kubernetes.Interface
	Virt virtclient.Interface
	// Guest is the test guest's kernel and initrd for the raw side.
	Guest startup.Guest
	Logf  func(string, ...any)
}

// Options bound the run.
type Options struct {
	// Downloads of the big file and small Requests timed per path.
	Downloads, Requests int
	// Timeout bounds each guest's way to answering HTTP.
	Timeout time.Duration
}

// target is one path's guest.
type target struct {
	path string
	// addr is host:port of its HTTP server.
	addr string
}

// Run boots both guests, measures them in alternation and removes the
// VMI, its namespace and the plain tap's network and guest whatever
// happens.
func Run(ctx context.Context, env Env, o Options) (res *Result, err error) {
	if err := namespace.Create(ctx, env.Kube, Namespace); err != nil {
		return nil, err
	}
	cleanup := context.WithoutCancel(ctx)
	defer func() {
		_ = env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).DeleteCollection(cleanup, metav1.DeleteOptions{}, metav1.ListOptions{})
		err = errors.Join(err, namespace.Delete(cleanup, env.Kube, 5*time.Minute, Namespace))
	}()
	vmi, err := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Create(ctx, VMI(platformName), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create VMI %s/%s: %w", Namespace, platformName, err)
	}
	// The raw guest boots while the platform schedules and boots its own.
	env.Logf("network: VMI %s/%s created; booting the same guest under raw libvirt on a plain tap", Namespace, vmi.Name)
	raw, err := startRaw(ctx, env.Guest, o.Timeout)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, raw.close()) }()
	ip, binding, err := waitOnline(ctx, env, vmi.Name, o.Timeout)
	if err != nil {
		return nil, err
	}
	platform := target{Platform, net.JoinHostPort(ip, "80")}
	if err := waitHTTP(ctx, platform.addr, o.Timeout); err != nil {
		return nil, fmt.Errorf("the platform's guest: %w", err)
	}
	env.Logf("network: both guests answer (platform %s through %s, raw %s); %d downloads of %d MiB and %d requests per path, alternating",
		ip, binding, GuestAddr.Addr(), o.Downloads, FileMiB, o.Requests)
	res, err = measure(ctx, []target{platform, {Raw, net.JoinHostPort(GuestAddr.Addr().String(), "80")}}, o.Downloads, o.Requests, FileBytes)
	if err != nil {
		return nil, err
	}
	res.VMI = Namespace + "/" + vmi.Name
	res.Notes = append(res.Notes,
		fmt.Sprintf("platform: binding %s, the guest reached at its pod's IP %s from the node: the node's pod-network bridge, the pod's veth, the binding's DNAT, its bridge and tap", binding, ip),
		fmt.Sprintf("raw libvirt: %s domain, tap %s on bridge %s (%s) in a namespace of the bench's, reached through veth %s (%s) and a host route to %s, forwarded with no NAT, MTU %d (the pod network's, from the bridge CNI's default); libvirt and QEMU at nice 0",
			raw.guest.DomainType, rawguest.TapName, rawguest.BridgeName, Addresses.Gateway, Addresses.HostLink, Addresses.Host, GuestAddr.Masked(), rawguest.LinkMTU))
	for _, r := range res.Rows {
		env.Logf("network: %s: median %.0f MB/s (min %.0f, max %.0f); requests p50 %s, p99 %s",
			r.Path, r.MedianMBps, r.MinMBps, r.MaxMBps, r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond))
	}
	return res, nil
}

// measure times downloads and requests of every target, alternating
// between them so that load on the machine affects each alike: each round
// visits every target once, and the first target of a round rotates.
// Warm-up transfers come first and are not timed.
func measure(ctx context.Context, targets []target, downloads, requests int, fileBytes int64) (*Result, error) {
	res := &Result{FileBytes: fileBytes, Downloads: downloads, Requests: requests}
	for _, t := range targets {
		for range WarmupDownloads {
			if _, err := download(ctx, bigURL(t), fileBytes); err != nil {
				return nil, fmt.Errorf("%s, warm-up: %w", t.path, err)
			}
		}
		for range WarmupRequests {
			if _, err := request(ctx, t.addr); err != nil {
				return nil, fmt.Errorf("%s, warm-up: %w", t.path, err)
			}
		}
	}
	rates := map[string][]float64{}
	for i := range downloads {
		for _, t := range rotate(targets, i) {
			d, err := download(ctx, bigURL(t), fileBytes)
			if err != nil {
				return nil, fmt.Errorf("%s, download %d: %w", t.path, i+1, err)
			}
			rates[t.path] = append(rates[t.path], mbps(fileBytes, d))
		}
	}
	lat := map[string][]time.Duration{}
	for i := range requests {
		for _, t := range rotate(targets, i) {
			d, err := request(ctx, t.addr)
			if err != nil {
				return nil, fmt.Errorf("%s, request %d: %w", t.path, i+1, err)
			}
			lat[t.path] = append(lat[t.path], d)
		}
	}
	for _, t := range targets {
		res.Rows = append(res.Rows, summarize(t.path, rates[t.path], lat[t.path]))
	}
	return res, nil
}

func bigURL(t target) string { return "http://" + t.addr + "/big" }

// rotate is targets starting at the i-th, wrapping around.
func rotate(targets []target, i int) []target {
	if len(targets) == 0 {
		return nil
	}
	k := i % len(targets)
	return append(append([]target{}, targets[k:]...), targets[:k]...)
}

// waitHTTP polls addr with small requests until one is answered with a
// 200: httpd starts after the lease.
func waitHTTP(ctx context.Context, addr string, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, last = request(ctx, addr)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("HTTP on %s (last: %v): %w", addr, last, err)
	}
	return nil
}

// rawSide is the plain tap's network and the raw guest on it.
type rawSide struct {
	net       *rawguest.Net
	guest     *rawguest.Guest
	serialLog string
}

// startRaw builds the plain tap's network, boots the raw guest on it and
// waits until the guest took its lease and answers HTTP.
func startRaw(ctx context.Context, guest startup.Guest, timeout time.Duration) (r *rawSide, err error) {
	n, err := rawguest.NewNet(Addresses)
	if err != nil {
		return nil, err
	}
	r = &rawSide{net: n}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
		}
	}()
	if err := n.AddTap(); err != nil {
		return r, err
	}
	if err := n.ServeDHCP(ctx, guestMAC, rawName); err != nil {
		return r, err
	}
	if r.guest, err = rawguest.New("vb-net-"); err != nil {
		return r, err
	}
	name, xml, serialLog, err := rawDomain(r.guest.Dir, r.guest.DomainType, guest)
	if err != nil {
		return r, err
	}
	r.serialLog = serialLog
	// The first start probes QEMU's capabilities: seconds.
	if err := r.guest.Start(ctx, n, name, xml, timeout); err != nil {
		return r, err
	}
	marker := framework.GuestNetMarker + " " + GuestAddr.Addr().String()
	start := time.Now()
	var serial []byte
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		select {
		case <-r.guest.Exited():
			return false, fmt.Errorf("raw libvirt exited (%v): %s", r.guest.ExitErr(), r.guest.ChildLog(600))
		default:
		}
		serial, _ = os.ReadFile(serialLog)
		return n.Leased() && strings.Contains(string(serial), marker), nil
	})
	if err != nil {
		return r, fmt.Errorf("raw guest: %q in %s and its DHCP lease taken (leased: %v; serial log ends %q): %w",
			marker, serialLog, n.Leased(), tailBytes(serial, 300), err)
	}
	if err := waitHTTP(ctx, net.JoinHostPort(GuestAddr.Addr().String(), "80"), timeout-time.Since(start)); err != nil {
		return r, fmt.Errorf("raw guest: %w", err)
	}
	return r, nil
}

// close stops the guest, then removes its network: QEMU must let go of
// the tap first.
func (r *rawSide) close() error {
	var errs []error
	if r.guest != nil {
		errs = append(errs, r.guest.Stop())
	}
	return errors.Join(append(errs, r.net.Close())...)
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
