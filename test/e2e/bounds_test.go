package e2e

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubevirt.dev/virt/launcher/layout"
)

// spewFor is how long TestSerialLogStaysBounded lets its guest print.
const spewFor = 2 * time.Minute

// TestSerialLogStaysBounded: a guest printing to its serial console without
// end (the test guest's virt.spew=1) for two minutes holds at most twice
// layout.SerialLogMaxBytes of serial log on the node (plus a second of
// output), and its launcher pod's emptyDirs stay below the sizeLimits the
// pod carries, while the guest prints many times that. Before the launcher
// rotated the log, QEMU appended to serial0.log until the node's disk was
// full.
func TestSerialLogStaysBounded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vmi.Name = "spew"
	kb := vmi.Spec.Domain.Firmware.KernelBoot
	kb.KernelArgs = strings.ReplaceAll(kb.KernelArgs, "vmi-tiny", vmi.Name) + " virt.spew=1"
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running, err := cluster.WaitVMIRunning(ctx, ns, vmi.Name)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.LauncherPod(ctx, running)
	if err != nil {
		t.Fatal(err)
	}

	// The pod as the API has it carries the bounds.
	limits := map[string]int64{}
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
			limits[v.Name] = v.EmptyDir.SizeLimit.Value()
		}
	}
	if limits[layout.PrivateVolume] == 0 {
		t.Fatalf("the launcher pod's %s emptyDir has no sizeLimit: %+v", layout.PrivateVolume, pod.Spec.Volumes)
	}
	if r := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage]; r.IsZero() {
		t.Errorf("the compute container requests no ephemeral storage: %+v", pod.Spec.Containers[0].Resources)
	}

	private := cluster.SerialLogPath(pod)
	private = filepath.Dir(private)
	emptyDirs := filepath.Dir(private)
	serialBound := int64(2*layout.SerialLogMaxBytes + 1<<20) // two generations and a second of output
	var worstSerial, worstPrivate int64
	var lastLine int64
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for time.Since(start) < spewFor {
		serial := fileSize(layout.SerialLog(private)) + fileSize(layout.SerialLog(private)+".1")
		worstSerial = max(worstSerial, serial)
		for name, limit := range limits {
			used := diskUse(filepath.Join(emptyDirs, name))
			if name == layout.PrivateVolume {
				worstPrivate = max(worstPrivate, used)
			}
			if used > limit {
				t.Fatalf("emptyDir %s uses %d bytes after %s, past its sizeLimit %d", name, used, time.Since(start).Round(time.Second), limit)
			}
		}
		if serial > serialBound {
			t.Fatalf("the serial log holds %d bytes after %s, past the bound %d", serial, time.Since(start).Round(time.Second), serialBound)
		}
		if n := lastSpewLine(layout.SerialLog(private)); n > lastLine {
			lastLine = n
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-tick.C:
		}
	}
	// Each line has more than 90 bytes: the guest printed at least this.
	printed := lastLine * 90
	t.Logf("in %s the guest printed %d lines (> %d MiB); the serial log held at most %d KiB, the private emptyDir %d KiB (sizeLimit %d MiB)",
		spewFor, lastLine, printed>>20, worstSerial>>10, worstPrivate>>10, limits[layout.PrivateVolume]>>20)
	if printed <= 2*layout.SerialLogMaxBytes {
		t.Errorf("the guest printed only %d bytes in %s: too few to show the bound (is virt.spew=1 in the test guest?)", printed, spewFor)
	}
	if fileSize(layout.SerialLog(private)+".1") == 0 {
		t.Errorf("no older generation of the serial log: it was never rotated")
	}
}

// fileSize is the size of a regular file, 0 if there is none.
func fileSize(path string) int64 {
	st, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// diskUse is what a directory's files take on disk (allocated blocks), as
// the kubelet measures an emptyDir.
func diskUse(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}

// lastSpewLine is the number of the last whole VIRT-GUEST-SPEW line of the
// serial log's last 64 KiB.
func lastSpewLine(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	off := max(0, st.Size()-64<<10)
	buf := make([]byte, st.Size()-off)
	n, _ := f.ReadAt(buf, off)
	var last int64
	sc := bufio.NewScanner(bytes.NewReader(buf[:n]))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "VIRT-GUEST-SPEW" {
			if v, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				last = max(last, v)
			}
		}
	}
	return last
}
