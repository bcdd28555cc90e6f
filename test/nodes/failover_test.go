package nodes

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// Helpers of the failover tests (TestNodeLoss, TestDrain): a VM placed on
// one node, every QEMU of it sampled through the test, virt-controller
// kept on the control-plane node with a short heartbeat timeout, the
// events that say why.

// controlPlaneLabel selects node 1, the one no test kills or drains.
const controlPlaneLabel = "node-role.kubernetes.io/control-plane"

// alwaysVM is artifacts/examples/vm-always.yaml named name.
func alwaysVM(t *testing.T, name string) *virtv1.VirtualMachine {
	t.Helper()
	vm, err := cluster.ExampleVM("vm-always.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vm.Name = name
	vm.Spec.Template.ObjectMeta.Labels = map[string]string{"app": name}
	kb := vm.Spec.Template.Spec.Domain.Firmware.KernelBoot
	kb.KernelArgs = strings.ReplaceAll(kb.KernelArgs, "virt.hostname=vm-always", "virt.hostname="+name)
	return vm
}

// createVMOn creates vm in ns and waits until its first instance runs on
// node and its guest printed its serial marker. The VM has no
// nodeSelector (its next instance may go anywhere): the other nodes are
// cordoned until its launcher pod is scheduled.
func createVMOn(ctx context.Context, t *testing.T, ns string, vm *virtv1.VirtualMachine, node string) (*virtv1.VirtualMachineInstance, *framework.SerialConsole) {
	t.Helper()
	var others []string
	for _, n := range cluster.Nodes() {
		if n != node {
			others = append(others, n)
		}
	}
	uncordon := func() {
		for _, n := range others {
			if err := setUnschedulable(context.Background(), n, false); err != nil {
				t.Errorf("uncordon %s: %v", n, err)
			}
		}
	}
	t.Cleanup(uncordon)
	for _, n := range others {
		if err := setUnschedulable(ctx, n, true); err != nil {
			t.Fatalf("cordon %s: %v", n, err)
		}
	}
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, err := cluster.WaitVMI(ctx, ns, vm.Name, framework.BootTimeout, "placed on "+node, func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.Status.NodeName != "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	uncordon()
	if vmi.Status.NodeName != node {
		t.Fatalf("the VM's instance went to node %s, want %s", vmi.Status.NodeName, node)
	}
	return waitGuestOn(ctx, t, ns, vm.Name, node)
}

// setUnschedulable cordons or uncordons a node, as kubectl does.
func setUnschedulable(ctx context.Context, node string, on bool) error {
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, on)
	_, err := cluster.Kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// qemuSampler looks for the QEMU processes of every instance of a VM (the
// domain names of its instances share the prefix NS_NAME_) every 100 ms
// until stopped, and remembers the most it saw at once.
type qemuSampler struct {
	prefix string
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	samples int
	most    []string // pid@node of the sample with the most QEMUs
	errs    []string
}

func sampleQEMUs(t *testing.T, ns, name string) *qemuSampler {
	s := &qemuSampler{prefix: "guest=" + ns + "_" + name + "_", stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(s.Stop)
	return s
}

func (s *qemuSampler) sample() {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var found []string
	for _, p := range procs {
		raw, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := bytes.Split(raw, []byte{0})
		if !strings.Contains(filepath.Base(string(args[0])), "qemu-system") || !bytes.Contains(raw, []byte(s.prefix)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(p))
		node, err := cluster.NodeOfProcess(pid)
		if err != nil {
			continue // gone meanwhile
		}
		found = append(found, fmt.Sprintf("%d@%s", pid, node))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	if len(found) > len(s.most) {
		s.most = found
	}
}

// Stop ends the sampling; it may be called more than once.
func (s *qemuSampler) Stop() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// check fails the test if two QEMUs of the VM ever ran at once.
func (s *qemuSampler) check(t *testing.T) {
	t.Helper()
	s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("%d samples of the VM's QEMU processes; at most %d at once %v", s.samples, len(s.most), s.most)
	if len(s.most) > 1 {
		t.Errorf("two QEMUs of the VM ran at once: %v", s.most)
	}
	if s.samples < 10 {
		t.Errorf("only %d samples of the QEMU processes", s.samples)
	}
}

// endOf records the first final version of the instance uid of a VM, which
// the VM controller may delete a moment later.
type endOf struct {
	mu    sync.Mutex
	uid   types.UID
	ended *virtv1.VirtualMachineInstance
	// failedEarly is set when the instance ended before allowed is set.
	allowed     bool
	failedEarly *virtv1.VirtualMachineInstance
}

func (e *endOf) observe(v *virtv1.VirtualMachineInstance) error {
	if v == nil || v.UID != e.uid || !v.Status.Phase.IsFinal() {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended == nil {
		e.ended = v.DeepCopy()
		if !e.allowed {
			e.failedEarly = e.ended
		}
	}
	return nil
}

func (e *endOf) allow() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.allowed = true
}

func (e *endOf) get() (ended, early *virtv1.VirtualMachineInstance) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ended, e.failedEarly
}

// watchEnd follows VMI ns/name and records the end of instance uid.
func watchEnd(ctx context.Context, t *testing.T, ns, name string, uid types.UID) *endOf {
	t.Helper()
	e := &endOf{uid: uid}
	w, err := cluster.WatchVMI(ctx, ns, name, e.observe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	return e
}

// waitEvent waits until an event of reason whose message contains text
// is recorded on the object selected by sel (involvedObject fields).
func waitEvent(ctx context.Context, t *testing.T, ns string, sel fields.Set, reason, text string) {
	t.Helper()
	s := fields.Set{"reason": reason}
	for k, v := range sel {
		s[k] = v
	}
	err := framework.WaitFor(ctx, time.Minute, fmt.Sprintf("event %s %q on %v", reason, text, sel), func(ctx context.Context) (bool, error) {
		events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: s.String()})
		if err != nil {
			return false, err
		}
		for _, ev := range events.Items {
			if strings.Contains(ev.Message, text) {
				t.Logf("event %s on %s %s: %s", ev.Reason, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Message)
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Error(err)
	}
}

// controllerOnControlPlane runs virt-controller with --heartbeat-timeout=d
// and on node 1 only, so that losing another node neither takes the
// controller with it nor waits 5 minutes; restored when the test ends.
func controllerOnControlPlane(t *testing.T, d time.Duration) {
	t.Helper()
	cluster.SetControllerArgs(t, map[string]string{controlPlaneLabel: ""}, "--heartbeat-timeout="+d.String())
}

// setOutOfService adds or removes the out-of-service taint of a node
// (Kubernetes' non-graceful node shutdown: the administrator says the node
// is off).
func setOutOfService(ctx context.Context, node string, on bool) error {
	n, err := cluster.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	taints := slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeOutOfService })
	if on {
		taints = append(taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute})
	}
	n.Spec.Taints = taints
	_, err = cluster.Kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}

// launcherPodsOn lists the launcher pods the API has on node.
func launcherPodsOn(ctx context.Context, node string) ([]string, error) {
	pods, err := cluster.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		LabelSelector: virtv1.ComponentLabel + "=" + virtv1.LauncherComponent,
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	return names, nil
}
