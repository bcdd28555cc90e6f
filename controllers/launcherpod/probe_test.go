package launcherpod

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// TestGuestProbes: the VMI's HTTP and TCP probes become the compute
// container's, a named port resolved against the interfaces' ports, held
// back by a startup probe; the pod never restarts a container in place.
func TestGuestProbes(t *testing.T) {
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.Interfaces = []virtv1.Interface{{Name: "default", Ports: []virtv1.Port{{Name: "web", Port: 8080}}}}
		v.Spec.ReadinessProbe = &virtv1.Probe{
			Handler:       virtv1.Handler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("web")}},
			PeriodSeconds: 2, FailureThreshold: 1, InitialDelaySeconds: 5, TimeoutSeconds: 3, SuccessThreshold: 2,
		}
		v.Spec.LivenessProbe = &virtv1.Probe{Handler: virtv1.Handler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(22)}}}
	})
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s: a liveness failure would restart the launcher in place", pod.Spec.RestartPolicy)
	}
	c := pod.Spec.Containers[0]
	if c.Name != layout.ComputeContainer {
		t.Fatalf("container %s, want %s", c.Name, layout.ComputeContainer)
	}
	// The guest's probes wait for the launcher's ready file.
	if p := c.StartupProbe; p == nil || p.Exec == nil || !slices.Equal(p.Exec.Command, []string{"cat", "/var/run/virt/launcher.ready"}) ||
		p.PeriodSeconds != 1 || p.FailureThreshold != 300 {
		t.Errorf("startup probe %+v", p)
	}
	r := c.ReadinessProbe
	if r == nil || r.HTTPGet == nil || r.HTTPGet.Port != intstr.FromInt32(8080) || r.HTTPGet.Path != "/healthz" ||
		r.PeriodSeconds != 2 || r.FailureThreshold != 1 || r.InitialDelaySeconds != 5 || r.TimeoutSeconds != 3 || r.SuccessThreshold != 2 {
		t.Errorf("readiness probe %+v", r)
	}
	if l := c.LivenessProbe; l == nil || l.TCPSocket == nil || l.TCPSocket.Port != intstr.FromInt32(22) {
		t.Errorf("liveness probe %+v", l)
	}
	none, err := New(newVMI(nil), testConfig)
	if err != nil {
		t.Fatal(err)
	}
	if c := none.Spec.Containers[0]; c.ReadinessProbe != nil || c.LivenessProbe != nil {
		t.Errorf("a VMI without probes got %+v, %+v", c.ReadinessProbe, c.LivenessProbe)
	}
}

// TestGuestAgentProbes: exec and guestAgentPing become exec probes of the
// launcher's own command, with a second more than the guest's timeout.
func TestGuestAgentProbes(t *testing.T) {
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.ReadinessProbe = &virtv1.Probe{Handler: virtv1.Handler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ok"}}}, TimeoutSeconds: 5}
		v.Spec.LivenessProbe = &virtv1.Probe{Handler: virtv1.Handler{GuestAgentPing: &virtv1.GuestAgentPing{}}}
	})
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	want := []string{LauncherBinary, "--guest-probe", "exec", "--guest-probe-timeout", "5", "--", "cat", "/tmp/ok"}
	if r := c.ReadinessProbe; r == nil || r.Exec == nil || !slices.Equal(r.Exec.Command, want) || r.TimeoutSeconds != 6 {
		t.Errorf("readiness probe %+v, want exec %q with timeout 6", r, want)
	}
	want = []string{LauncherBinary, "--guest-probe", "ping", "--guest-probe-timeout", "1"}
	if l := c.LivenessProbe; l == nil || l.Exec == nil || !slices.Equal(l.Exec.Command, want) || l.TimeoutSeconds != 2 {
		t.Errorf("liveness probe %+v, want exec %q with timeout 2", l, want)
	}
}
