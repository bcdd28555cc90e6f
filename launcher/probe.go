package launcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"k8s.io/klog/v2"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/guestprobe"
	"kubevirt.dev/virt/launcher/layout"
)

// WriteNodeFacts probes this node's hypervisor exactly as a launcher
// starting here would (openLibvirt: the embedded libvirt, seeded from the
// image, in a temporary directory instead of a pod's private volume; the
// same /dev/kvm check) and writes the answer its Info would give, without
// the VMI and the temporary URI, to out as JSON, atomically: a reader sees
// the whole file or none.
//
// virt-handler's init container runs it (artifacts/virt-handler): the
// node's facts come from the platform's image in the platform's pod, not
// from a launcher inside a tenant's pod, whose socket the tenant can
// answer on. It gives up after o.ProbeTimeout: a QEMU that never answers
// libvirt's probe must fail the container, not hold it.
func (o *Options) WriteNodeFacts(ctx context.Context, out string) error {
	tmp, err := os.MkdirTemp("", "virt-probe-node-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p := *o
	p.PrivateDir = tmp
	type result struct {
		info *apiv1.InfoResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		conn, info, err := p.openLibvirt(ctx, nil)
		if err == nil {
			conn.Close()
		}
		done <- result{info, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(o.ProbeTimeout):
		return fmt.Errorf("libvirt did not describe the hypervisor within %v", o.ProbeTimeout)
	}
	if r.err != nil {
		return r.err
	}
	info := r.info
	info.Vmi, info.LibvirtUri, info.DomainName = nil, "", ""
	b, err := protojson.MarshalOptions{Multiline: true}.Marshal(info)
	if err != nil {
		return err
	}
	if len(b) > layout.NodeFactsMaxBytes {
		return fmt.Errorf("the node's facts take %d bytes, more than the %d its reader takes", len(b), layout.NodeFactsMaxBytes)
	}
	if err := writeAtomic(out, append(b, '\n')); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Node facts written", "file", out, "libvirt", info.LibvirtVersion,
		"qemu", info.HypervisorVersion, "domainType", info.DomainType,
		"hardwareVirtualization", info.HardwareVirtualization.GetUsable(), "reason", info.HardwareVirtualization.GetReason())
	return nil
}

// writeAtomic writes data to a temporary file beside path and renames it
// over path.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename: nothing to remove
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// RunGuestProbe runs the probe o.GuestProbe ("ping", or "exec" of command)
// through the launcher serving in this pod and returns the exit code of
// the compute container's exec probe: 0 when it passed. It prints why it
// failed, which the kubelet puts into the probe's event.
func (o *Options) RunGuestProbe(ctx context.Context, command []string) int {
	req := guestprobe.Request{TimeoutSeconds: o.GuestProbeTimeout}
	switch o.GuestProbe {
	case "ping":
		req.Ping = true
	case "exec":
		if len(command) == 0 {
			fmt.Fprintln(os.Stderr, "--guest-probe exec needs the command after --")
			return 2
		}
		req.Exec = command
	default:
		fmt.Fprintf(os.Stderr, "--guest-probe %q: want ping or exec\n", o.GuestProbe)
		return 2
	}
	timeout := time.Duration(max(o.GuestProbeTimeout, 1))*time.Second + 2*time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := guestprobe.Probe(ctx, layout.GuestProbeSocket(o.PrivateDir), req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if resp.Output != "" {
		fmt.Print(resp.Output)
	}
	if resp.Error != "" {
		fmt.Fprintln(os.Stderr, resp.Error)
	}
	if resp.ExitCode != 0 {
		if resp.Error == "" {
			fmt.Fprintf(os.Stderr, "the command exited with %d in the guest\n", resp.ExitCode)
		}
		return 1
	}
	return 0
}
