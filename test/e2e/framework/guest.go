package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/layout"
)

// Markers the project's test guest (hack/build-guest.sh) prints on its
// serial console.
const (
	GuestReadyMarker        = "VIRT-GUEST-READY"
	GuestACPIShutdownMarker = "VIRT-GUEST-ACPI-SHUTDOWN"
)

// BootTimeout bounds a VMI's way from creation to Running: pod start, a
// launcher probing QEMU's capabilities when its cache is cold, the guest
// starting under software emulation on a loaded machine.
const BootTimeout = 4 * time.Minute

// WaitVMI polls a VMI until cond accepts it and returns it.
func (c *Cluster) WaitVMI(ctx context.Context, ns, name string, timeout time.Duration, what string,
	cond func(*virtv1.VirtualMachineInstance) (bool, error)) (*virtv1.VirtualMachineInstance, error) {
	var vmi *virtv1.VirtualMachineInstance
	err := WaitFor(ctx, timeout, fmt.Sprintf("VMI %s/%s %s", ns, name, what), func(ctx context.Context) (bool, error) {
		var err error
		vmi, err = c.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ok, err := cond(vmi)
		if err == nil && !ok {
			err = fmt.Errorf("phase %s, reason %q, conditions %s", vmi.Status.Phase, vmi.Status.Reason, conditions(vmi))
		}
		return ok, err
	})
	return vmi, err
}

// WaitVMIRunning waits until a VMI is Running and Ready. A VMI that ends
// (Failed, Succeeded) on the way fails the wait at once, with its reason.
func (c *Cluster) WaitVMIRunning(ctx context.Context, ns, name string) (*virtv1.VirtualMachineInstance, error) {
	var final error
	vmi, err := c.WaitVMI(ctx, ns, name, BootTimeout, "Running", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		if v.Status.Phase.IsFinal() {
			final = fmt.Errorf("VMI %s/%s ended %s (reason %q) instead of running; conditions %s", ns, name, v.Status.Phase, v.Status.Reason, conditions(v))
			return true, nil
		}
		return v.Status.Phase == virtv1.Running && Condition(v, virtv1.VirtualMachineInstanceReady) == corev1.ConditionTrue, nil
	})
	if final != nil {
		return vmi, final
	}
	return vmi, err
}

// WaitVMIGone waits until a VMI no longer exists.
func (c *Cluster) WaitVMIGone(ctx context.Context, ns, name string, timeout time.Duration) error {
	return WaitFor(ctx, timeout, fmt.Sprintf("VMI %s/%s gone", ns, name), func(ctx context.Context) (bool, error) {
		vmi, err := c.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, fmt.Errorf("still there: phase %s, deleting %v, finalizers %v", vmi.Status.Phase, vmi.DeletionTimestamp != nil, vmi.Finalizers)
	})
}

// Condition returns the status of a VMI's condition, or "" when absent.
func Condition(vmi *virtv1.VirtualMachineInstance, t virtv1.VirtualMachineInstanceConditionType) corev1.ConditionStatus {
	for _, c := range vmi.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func conditions(vmi *virtv1.VirtualMachineInstance) string {
	var parts []string
	for _, c := range vmi.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Phases returns the phases a VMI went through, in order, as the API server
// recorded them.
func Phases(vmi *virtv1.VirtualMachineInstance) []virtv1.VirtualMachineInstancePhase {
	var phases []virtv1.VirtualMachineInstancePhase
	for _, ts := range vmi.Status.PhaseTransitionTimestamps {
		phases = append(phases, ts.Phase)
	}
	return phases
}

// LauncherPods returns the launcher pods of a VMI.
func (c *Cluster) LauncherPods(ctx context.Context, vmi *virtv1.VirtualMachineInstance) ([]corev1.Pod, error) {
	pods, err := c.Kube.CoreV1().Pods(vmi.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: virtv1.CreatedByLabel + "=" + string(vmi.UID),
	})
	if err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// LauncherPod returns the one launcher pod of a VMI.
func (c *Cluster) LauncherPod(ctx context.Context, vmi *virtv1.VirtualMachineInstance) (*corev1.Pod, error) {
	pods, err := c.LauncherPods(ctx, vmi)
	if err != nil {
		return nil, err
	}
	if len(pods) != 1 {
		return nil, fmt.Errorf("VMI %s/%s has %d launcher pods, want 1", vmi.Namespace, vmi.Name, len(pods))
	}
	return &pods[0], nil
}

// SerialLogPath is where the guest's serial console of a launcher pod is
// logged, as seen from the host: in the pod's private emptyDir below the
// kubelet of the pod's node.
func (c *Cluster) SerialLogPath(pod *corev1.Pod) string {
	return layout.SerialLog(layout.HostPrivateDir(c.NodeKubeletRoot(pod.Spec.NodeName), string(pod.UID)))
}

// SerialConsole follows a guest's serial log while it exists and keeps what
// it read, so the last lines stay available after the pod and its volume
// are gone (a guest's shutdown message is written just before that).
type SerialConsole struct {
	path string
	mu   sync.Mutex
	data []byte
	stop chan struct{}
}

// FollowSerial starts following the serial log of a launcher pod until the
// test ends.
func (c *Cluster) FollowSerial(t *testing.T, pod *corev1.Pod) *SerialConsole {
	s := &SerialConsole{path: c.SerialLogPath(pod), stop: make(chan struct{})}
	go s.follow()
	t.Cleanup(func() { close(s.stop) })
	return s
}

func (s *SerialConsole) follow() {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(s.path); err == nil {
			s.mu.Lock()
			if len(data) >= len(s.data) {
				s.data = data
			}
			s.mu.Unlock()
		}
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}

// Output is everything read from the console so far.
func (s *SerialConsole) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.data)
}

// WaitFor waits until the console printed text.
func (s *SerialConsole) WaitFor(ctx context.Context, text string, timeout time.Duration) error {
	return WaitFor(ctx, timeout, fmt.Sprintf("%q on the serial console (%s)", text, s.path), func(context.Context) (bool, error) {
		return strings.Contains(s.Output(), text), nil
	})
}

// QEMUProcesses returns the PIDs of the QEMU processes running the domain
// of a VMI on this node (libvirt names the guest on QEMU's command line).
func QEMUProcesses(vmi *virtv1.VirtualMachineInstance) ([]int, error) {
	needle := "guest=" + domain.Name(vmi.Namespace, vmi.Name, vmi.UID) + ","
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, p := range procs {
		raw, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := bytes.Split(raw, []byte{0})
		if !strings.Contains(filepath.Base(string(args[0])), "qemu-system") {
			continue
		}
		if !bytes.Contains(raw, []byte(needle)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(p))
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids, nil
}
