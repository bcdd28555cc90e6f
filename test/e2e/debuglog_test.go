package e2e

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// TestLibvirtDebugLog: a VMI annotated kubevirt.io/libvirt-log-filters gets
// libvirt's debug messages of those sources in its launcher's log, from
// the container's environment; a value that is not a filter list (the one
// that rewrote KubeVirt's virtqemud.conf) is refused at the field.
func TestLibvirtDebugLog(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vmis := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns)

	bad, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad.Name = "injected"
	bad.Annotations = map[string]string{virtv1.LibvirtLogFiltersAnnotation: "2:qemu.qemu_monitor 3:*\"\nlog_outputs=\"1:file:/tmp/x"}
	_, err = vmis.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.annotations[kubevirt.io/libvirt-log-filters]") {
		t.Errorf("a VMI whose log filters carry a quote and a newline: %v; want 422 at metadata.annotations[kubevirt.io/libvirt-log-filters]", err)
	}

	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const filters = "1:qemu.qemu_process 3:*"
	vmi.Annotations = map[string]string{virtv1.LibvirtLogFiltersAnnotation: filters}
	if _, err := vmis.Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
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
	var env []corev1.EnvVar
	for _, c := range pod.Spec.Containers {
		if c.Name == layout.ComputeContainer {
			env = c.Env
		}
	}
	if !slices.Contains(env, corev1.EnvVar{Name: "LIBVIRT_LOG_FILTERS", Value: filters}) {
		t.Errorf("compute container's environment %v lacks LIBVIRT_LOG_FILTERS=%q", env, filters)
	}
	logs, err := cluster.Kube.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: layout.ComputeContainer}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// libvirt's own format: "<time>: <thread>: debug : qemuProcessLaunch:<line> : ...".
	if !regexp.MustCompile(`(?m): debug : qemuProcess[A-Za-z]+:\d+ : `).Match(logs) {
		t.Errorf("no debug message of qemu.qemu_process in the launcher's log:\n%s", logs)
	}
	if err := cluster.DeleteVMI(ctx, t, ns, vmi.Name, deleteTimeout); err != nil {
		t.Error(err)
	}
}
