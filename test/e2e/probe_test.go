package e2e

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/virtctl/stream"
)

// probedLabel selects the guests of TestProbes for their Service.
const probedLabel = "e2e.virt.kubevirt.dev/probed"

// TestProbes runs KubeVirt's probes on two vmi-tiny guests of runStrategy
// Always VMs behind one Service, both with an HTTP readiness probe on a
// port nothing serves at boot: each is Ready only once its guest serves it
// (started from the serial console), the Service then reaches both, and
// nothing of it reaches the one whose server stopped. The second has a TCP
// liveness probe: when its guest stops serving, the VMI fails with reason
// LivenessProbeFailed and the VM starts a new one. The first has two vCPUs
// and networkInterfaceMultiqueue: its NIC has two queue pairs in the guest
// (the sysfs queues ethtool -l counts; the tiny guest has no ethtool).
func TestProbes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	const probePort = 8081
	vm := func(name string, mutate func(*virtv1.VirtualMachineInstanceSpec)) {
		vmi := networkVMI(t, name, nil)
		vmi.Labels[probedLabel] = "yes"
		vmi.Spec.ReadinessProbe = &virtv1.Probe{
			Handler:       virtv1.Handler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(probePort)}},
			PeriodSeconds: 1, FailureThreshold: 1,
		}
		mutate(&vmi.Spec)
		if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, &virtv1.VirtualMachine{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: virtv1.VirtualMachineSpec{
				RunStrategy: ptr.To(virtv1.RunStrategyAlways),
				Template:    &virtv1.VirtualMachineInstanceTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: vmi.Labels}, Spec: vmi.Spec},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	vm("probe-a", func(s *virtv1.VirtualMachineInstanceSpec) {
		s.Domain.CPU = &virtv1.CPU{Cores: 2}
		s.Domain.Devices.NetworkInterfaceMultiQueue = ptr.To(true)
		// As Harvester's templates give it: memory only as a limit, which
		// is the request too.
		s.Domain.Resources = virtv1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("192Mi")}}
	})
	vm("probe-b", func(s *virtv1.VirtualMachineInstanceSpec) {
		// 8080 is served from boot on; the guest's boot, after the
		// launcher started, fits into the initial delay and 5 failures
		// (70 s); a guest that stops serving fails within 10 s.
		s.LivenessProbe = &virtv1.Probe{
			Handler:             virtv1.Handler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
			InitialDelaySeconds: 60, PeriodSeconds: 2, FailureThreshold: 5,
		}
	})
	svc, err := cluster.Kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "probed"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{probedLabel: "yes"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: probePort, TargetPort: intstr.FromInt32(probePort)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	consoles := map[string]*output{}
	conns := map[string]*stream.Conn{}
	vmis := map[string]*virtv1.VirtualMachineInstance{}
	for _, name := range []string{"probe-a", "probe-b"} {
		// Running, not Ready: the readiness probe's port is served only
		// once the test says so.
		vmi, err := cluster.WaitVMI(ctx, ns, name, framework.BootTimeout, "Running", func(v *virtv1.VirtualMachineInstance) (bool, error) {
			if v.Status.Phase.IsFinal() {
				return false, fmt.Errorf("VMI %s ended %s (%s)", name, v.Status.Phase, v.Status.Reason)
			}
			return v.Status.Phase == virtv1.Running, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		pod, err := cluster.LauncherPod(ctx, vmi)
		if err != nil {
			t.Fatal(err)
		}
		if err := cluster.FollowSerial(t, pod).WaitFor(ctx, "VIRT-GUEST-READY", netTimeout); err != nil {
			t.Fatal(err)
		}
		conn, err := stream.Dial(ctx, cluster.Config, ns, name, "console")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		consoles[name] = readInto(conn)
		conns[name] = conn
		vmis[name] = vmi
	}
	run := func(name, command string) {
		t.Helper()
		if _, err := fmt.Fprintf(conns[name], "%s\r", command); err != nil {
			t.Fatal(err)
		}
	}
	ready := func(name string, want corev1.ConditionStatus, reason string) *virtv1.VirtualMachineInstance {
		t.Helper()
		vmi, err := cluster.WaitVMI(ctx, ns, name, time.Minute, fmt.Sprintf("Ready %s %s", want, reason), func(v *virtv1.VirtualMachineInstance) (bool, error) {
			c := conditionOf(v, virtv1.VirtualMachineInstanceReady)
			return c != nil && c.Status == want && c.Reason == reason, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return vmi
	}

	t.Run("Ready only once the guest serves the probe's port", func(t *testing.T) {
		for _, name := range []string{"probe-a", "probe-b"} {
			// The guest booted and serves 80 and 8080, not 8081.
			ready(name, corev1.ConditionFalse, "ReadinessProbeFailed")
			run(name, fmt.Sprintf("httpd -f -p %d -h /www & echo $! >/tmp/probed", probePort))
		}
		for _, name := range []string{"probe-a", "probe-b"} {
			ready(name, corev1.ConditionTrue, "")
		}
	})

	t.Run("the Service reaches both ready guests", func(t *testing.T) {
		seen := map[string]bool{}
		url := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(probePort)) + "/"
		if err := framework.WaitFor(ctx, time.Minute, "answers of both guests through the Service", func(ctx context.Context) (bool, error) {
			body, err := framework.HTTPGet(ctx, url)
			for _, name := range []string{"probe-a", "probe-b"} {
				if err == nil && strings.Contains(body, name) {
					seen[name] = true
				}
			}
			return seen["probe-a"] && seen["probe-b"], nil
		}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the Service sends nothing to a guest that stopped serving", func(t *testing.T) {
		run("probe-b", "kill $(cat /tmp/probed)")
		b := ready("probe-b", corev1.ConditionFalse, "ReadinessProbeFailed")
		ip := b.Status.Interfaces[0].IPAddress
		if err := framework.WaitFor(ctx, time.Minute, "probe-b's address out of the Service's ready endpoints", func(ctx context.Context) (bool, error) {
			list, err := cluster.Kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=probed"})
			if err != nil {
				return false, err
			}
			for _, s := range list.Items {
				for _, e := range s.Endpoints {
					if e.Conditions.Ready != nil && *e.Conditions.Ready && slices.Contains(e.Addresses, ip) {
						return false, nil
					}
				}
			}
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		// kube-proxy programs the node from the EndpointSlice on its own
		// schedule: wait until 20 requests in a row reach probe-a. A Service
		// that still sends to probe-b fails about every other request and
		// never gets there.
		url := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(probePort)) + "/"
		inARow, last := 0, ""
		if err := framework.WaitFor(ctx, 30*time.Second, "20 answers in a row from probe-a through the Service", func(ctx context.Context) (bool, error) {
			body, err := framework.HTTPGet(ctx, url)
			if err != nil || !strings.Contains(body, "probe-a") {
				inARow, last = 0, fmt.Sprintf("%q, %v", body, err)
				return false, nil
			}
			inARow++
			return inARow == 20, nil
		}); err != nil {
			t.Fatalf("%v; the last other answer: %s", err, last)
		}
	})

	t.Run("networkInterfaceMultiqueue with 2 vCPUs gives the guest 2 queue pairs", func(t *testing.T) {
		run("probe-a", `echo "Q=$(ls /sys/class/net/eth0/queues | tr '\n' ' ')"`)
		if err := consoles["probe-a"].waitFor(ctx, "Q=rx-0 rx-1 tx-0 tx-1 "); err != nil {
			t.Fatalf("%v\n%s", err, consoles["probe-a"].tail())
		}
	})

	t.Run("memory given only as resources.limits is the guest's", func(t *testing.T) {
		// vmi-tiny asks for 128Mi; the kernel keeps some of the 192Mi for
		// itself (MemTotal measured: 154 MiB).
		run("probe-a", `echo "MEMKB=$(awk '/MemTotal/ {print $2}' /proc/meminfo)"`)
		if err := consoles["probe-a"].waitFor(ctx, "MEMKB=1"); err != nil {
			t.Fatalf("%v\n%s", err, consoles["probe-a"].tail())
		}
		m := regexp.MustCompile(`MEMKB=([0-9]+)`).FindAllStringSubmatch(consoles["probe-a"].String(), -1)
		if len(m) == 0 {
			t.Fatalf("no MemTotal on the console:\n%s", consoles["probe-a"].tail())
		}
		kb, _ := strconv.Atoi(m[len(m)-1][1])
		if kb <= 140<<10 || kb > 192<<10 {
			t.Errorf("the guest has %d KiB, want a little below 192 MiB (the limit)", kb)
		}
	})

	t.Run("a liveness failure ends the VMI and the VM starts a new one", func(t *testing.T) {
		old := vmis["probe-b"]
		var mu sync.Mutex
		var ended *virtv1.VirtualMachineInstanceStatus
		w, err := cluster.WatchVMI(ctx, ns, "probe-b", func(v *virtv1.VirtualMachineInstance) error {
			if v != nil && v.UID == old.UID && v.Status.Phase.IsFinal() {
				mu.Lock()
				ended = v.Status.DeepCopy()
				mu.Unlock()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		run("probe-b", "killall httpd")
		start := time.Now()
		if _, err := cluster.WaitVMI(ctx, ns, "probe-b", 4*time.Minute, "a new, running instance", func(v *virtv1.VirtualMachineInstance) (bool, error) {
			return v.UID != old.UID && v.Status.Phase == virtv1.Running, nil
		}); err != nil {
			t.Fatal(err)
		}
		t.Logf("a new instance ran %v after the guest stopped serving", time.Since(start).Round(time.Second))
		mu.Lock()
		defer mu.Unlock()
		if ended == nil {
			t.Fatal("the old instance's final status was not seen")
		}
		if ended.Phase != virtv1.Failed || ended.Reason != virtv1.ReasonLivenessProbeFailed {
			t.Errorf("the old instance ended %s, reason %q, want Failed, %s", ended.Phase, ended.Reason, virtv1.ReasonLivenessProbeFailed)
		}
		t.Logf("it ended: %s", conditionOf(&virtv1.VirtualMachineInstance{Status: *ended}, virtv1.VirtualMachineInstanceReady).Message)
	})
}

func conditionOf(v *virtv1.VirtualMachineInstance, t virtv1.VirtualMachineInstanceConditionType) *virtv1.VirtualMachineInstanceCondition {
	for i := range v.Status.Conditions {
		if v.Status.Conditions[i].Type == t {
			return &v.Status.Conditions[i]
		}
	}
	return nil
}
