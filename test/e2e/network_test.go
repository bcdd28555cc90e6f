package e2e

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/google/nftables"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// netTimeout bounds what a booted guest needs to answer on the network: its
// DHCP lease and its HTTP servers, under TCG on a loaded machine.
const netTimeout = 2 * time.Minute

// vmiLabel selects one test VMI (and its launcher pod, which carries the
// VMI's labels) for a Service.
const vmiLabel = "e2e.virt.kubevirt.dev/vmi"

// networkVMI is vmi-tiny named name, labelled for a Service, with its
// pod-network interface changed by mutate.
func networkVMI(t *testing.T, name string, mutate func(*virtv1.Interface)) *virtv1.VirtualMachineInstance {
	t.Helper()
	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vmi.Name = name
	vmi.Labels = map[string]string{vmiLabel: name}
	kb := vmi.Spec.Domain.Firmware.KernelBoot
	kb.KernelArgs = strings.ReplaceAll(kb.KernelArgs, "virt.hostname=vmi-tiny", "virt.hostname="+name)
	iface := virtv1.Interface{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}}}
	if mutate != nil {
		mutate(&iface)
	}
	vmi.Spec.Networks = []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}}
	vmi.Spec.Domain.Devices.Interfaces = []virtv1.Interface{iface}
	return vmi
}

// guestOnline waits until vmi runs and its guest took its DHCP lease (the
// launcher reports it in status.interfaces), and returns it.
func guestOnline(ctx context.Context, t *testing.T, ns, name string) *virtv1.VirtualMachineInstance {
	t.Helper()
	if _, err := cluster.WaitVMIRunning(ctx, ns, name); err != nil {
		t.Fatal(err)
	}
	vmi, err := cluster.WaitVMI(ctx, ns, name, netTimeout, "the guest's DHCP lease in status.interfaces", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return len(v.Status.Interfaces) == 1 && strings.Contains(v.Status.Interfaces[0].InfoSource, "dhcp") && v.Status.Interfaces[0].IPAddress != "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return vmi
}

// TestGuestNetworking: guests are servers on the pod network. Behind
// masquerade a guest answers on its pod's IP and behind a Service, sees its
// clients' real addresses, reaches pods and Services, and gets only the
// ports it lists; under the bridge binding the guest holds the pod's IP
// itself; guests reach each other; and nothing of it lands on the host.
func TestGuestNetworking(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vmis := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns)

	// A pod with an HTTP server, and a Service in front of it: what a guest
	// reaches out to.
	web := startTestHTTPD(t, ns)

	for _, vmi := range []*virtv1.VirtualMachineInstance{
		networkVMI(t, "masq", nil),
		networkVMI(t, "port80", func(i *virtv1.Interface) { i.Ports = []virtv1.Port{{Name: "http", Port: 80, Protocol: "TCP"}} }),
		networkVMI(t, "bridged", func(i *virtv1.Interface) {
			i.Masquerade, i.Bridge = nil, &virtv1.InterfaceBridge{}
		}),
	} {
		if _, err := vmis.Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := cluster.Kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "masq"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{vmiLabel: "masq"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	masq := guestOnline(ctx, t, ns, "masq")
	port80 := guestOnline(ctx, t, ns, "port80")
	bridged := guestOnline(ctx, t, ns, "bridged")
	masqIP, port80IP, bridgedIP := masq.Status.Interfaces[0].IPAddress, port80.Status.Interfaces[0].IPAddress, bridged.Status.Interfaces[0].IPAddress

	t.Run("status.interfaces names the pod's IP and interface", func(t *testing.T) {
		for _, vmi := range []*virtv1.VirtualMachineInstance{masq, bridged} {
			pod, err := cluster.LauncherPod(ctx, vmi)
			if err != nil {
				t.Fatal(err)
			}
			got := vmi.Status.Interfaces[0]
			if got.IPAddress != pod.Status.PodIP || got.PodInterfaceName != "eth0" || got.MAC == "" || got.InfoSource != "domain, dhcp" {
				t.Errorf("%s: status.interfaces[0] = %+v, want ipAddress %s (the pod's), podInterfaceName eth0, a MAC, infoSource \"domain, dhcp\"",
					vmi.Name, got, pod.Status.PodIP)
			}
		}
	})

	t.Run("masquerade: the guest answers on the pod IP and sees the client's address", func(t *testing.T) {
		if _, err := framework.WaitHTTP(ctx, "http://"+masqIP+"/", "masq", netTimeout); err != nil {
			t.Fatal(err)
		}
		want, err := framework.SourceAddressTo(masqIP)
		if err != nil {
			t.Fatal(err)
		}
		body, err := framework.WaitHTTP(ctx, "http://"+masqIP+"/cgi-bin/client", want, netTimeout)
		if err != nil {
			t.Fatalf("the guest must see this host's address %s, not its bridge's: %v", want, err)
		}
		t.Logf("the guest saw the client as %s", strings.TrimSpace(body))
	})

	t.Run("masquerade: a ClusterIP Service selecting the VMI's label reaches the guest", func(t *testing.T) {
		if _, err := framework.WaitHTTP(ctx, "http://"+svc.Spec.ClusterIP+"/", "masq", netTimeout); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("masquerade: the guest reaches a pod and a Service, from its pod's IP", func(t *testing.T) {
		body, err := framework.WaitHTTP(ctx, fetchURL(masqIP, web.podIP, 8080), "VIRT-TEST-HTTPD", netTimeout)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(body, "client="+masqIP+":") {
			t.Errorf("the pod saw the guest's request come from %q, want the VMI pod's IP %s (masquerade)", body, masqIP)
		}
		if _, err := framework.WaitHTTP(ctx, fetchURL(masqIP, web.clusterIP, 80), "VIRT-TEST-HTTPD", netTimeout); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ports: all forwarded when none are listed, only those listed otherwise", func(t *testing.T) {
		if _, err := framework.WaitHTTP(ctx, "http://"+net.JoinHostPort(masqIP, "8080")+"/", "masq", netTimeout); err != nil {
			t.Fatalf("a VMI listing no ports must answer on every port its guest serves: %v", err)
		}
		if _, err := framework.WaitHTTP(ctx, "http://"+port80IP+"/", "port80", netTimeout); err != nil {
			t.Fatal(err)
		}
		// The same guest serves 8080 (masq answered there): only the
		// forwarding decides.
		if body, err := framework.HTTPGet(ctx, "http://"+net.JoinHostPort(port80IP, "8080")+"/"); err == nil {
			t.Errorf("a VMI listing only port 80 answered on 8080: %q", body)
		}
	})

	t.Run("bridge: the guest holds the pod's IP", func(t *testing.T) {
		pod, err := cluster.LauncherPod(ctx, bridged)
		if err != nil {
			t.Fatal(err)
		}
		serial := cluster.FollowSerial(t, pod)
		if err := serial.WaitFor(ctx, framework.GuestNetMarker+" "+pod.Status.PodIP, netTimeout); err != nil {
			t.Fatalf("%v\nserial console:\n%s", err, serial.Output())
		}
		if _, err := framework.WaitHTTP(ctx, "http://"+bridgedIP+"/", "bridged", netTimeout); err != nil {
			t.Fatal(err)
		}
		want, err := framework.SourceAddressTo(bridgedIP)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := framework.WaitHTTP(ctx, "http://"+bridgedIP+"/cgi-bin/client", want, netTimeout); err != nil {
			t.Fatal(err)
		}
		if _, err := framework.WaitHTTP(ctx, fetchURL(bridgedIP, web.clusterIP, 80), "VIRT-TEST-HTTPD", netTimeout); err != nil {
			t.Fatalf("a bridged guest reaches Services through the pod's gateway: %v", err)
		}
	})

	t.Run("two VMIs reach each other by IP", func(t *testing.T) {
		if _, err := framework.WaitHTTP(ctx, fetchURL(masqIP, bridgedIP, 80), "bridged", netTimeout); err != nil {
			t.Error(err)
		}
		if _, err := framework.WaitHTTP(ctx, fetchURL(bridgedIP, masqIP, 80), "masq", netTimeout); err != nil {
			t.Error(err)
		}
	})

	t.Run("the binding lives in the pod's network namespace", func(t *testing.T) {
		for _, vmi := range []*virtv1.VirtualMachineInstance{masq, bridged} {
			pids, err := framework.QEMUProcesses(vmi)
			if err != nil || len(pids) != 1 {
				t.Fatalf("want one QEMU process of %s, found %v (%v)", vmi.Name, pids, err)
			}
			links, tables, err := framework.GuestNetworkDevices(pids[0])
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(links)
			wantTables := 1
			if vmi.Name == "bridged" {
				wantTables = 0
			}
			if !slices.Equal(links, []string{"k6t-eth0", "tap0"}) || len(tables) != wantTables {
				t.Errorf("%s's pod: links %v, tables %v; want k6t-eth0 and tap0, %d table(s)", vmi.Name, links, tables, wantTables)
			}
		}
	})

	for _, name := range []string{"masq", "port80", "bridged"} {
		if err := cluster.DeleteVMI(ctx, t, ns, name, deleteTimeout); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("nothing is left on the host", func(t *testing.T) {
		links, tables, err := framework.GuestNetworkDevices(0)
		if err != nil {
			t.Fatal(err)
		}
		if len(links) > 0 || len(tables) > 0 {
			t.Errorf("the host has guest network devices %v and tables %v; they belong in the pods' namespaces", links, tables)
		}
	})
}

// fetchURL asks the test guest at guestIP to GET / of host:port itself
// (its /cgi-bin/fetch) and answer with what it got.
func fetchURL(guestIP, host string, port int) string {
	return fmt.Sprintf("http://%s/cgi-bin/fetch?%s", guestIP, net.JoinHostPort(host, fmt.Sprint(port)))
}

type testHTTPD struct{ podIP, clusterIP string }

// startTestHTTPD runs the test HTTP server (hack/testhttpd) in a pod of ns
// with a Service (port 80) in front of it.
func startTestHTTPD(t *testing.T, ns string) testHTTPD {
	t.Helper()
	ctx := t.Context()
	labels := map[string]string{"app": "test-httpd"}
	_, err := cluster.Kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "test-httpd", Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "httpd", Image: "localhost/test-httpd:dev", ImagePullPolicy: corev1.PullNever,
				Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
				SecurityContext: &corev1.SecurityContext{
					RunAsUser: ptr.To[int64](65534), RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cluster.Kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "test-httpd"},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.WaitPodReady(ctx, ns, "app=test-httpd", "", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return testHTTPD{podIP: pod.Status.PodIP, clusterIP: svc.Spec.ClusterIP}
}

// TestHandlerRestartDuringNetworkSetup: virt-handler killed while a VMI is
// starting (its pod runs, its network may be half made) — the new handler
// finishes the job: the VMI runs, answers on its pod IP, and its pod holds
// exactly one set of devices and rules.
func TestHandlerRestartDuringNetworkSetup(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vmi := networkVMI(t, "restarted", nil)
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: virtHandlerSelector})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("want one virt-handler pod, got %d (%v)", len(pods.Items), err)
	}
	old := pods.Items[0]
	// Scheduled: the pod is handed to the node, the handler is about to
	// prepare its network and start the guest.
	if _, err := cluster.WaitVMI(ctx, ns, "restarted", 2*time.Minute, "Scheduled", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.Status.Phase == virtv1.Scheduled || v.Status.Phase == virtv1.Running, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Kube.CoreV1().Pods("virt-system").Delete(ctx, old.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.WaitPodReady(ctx, "virt-system", virtHandlerSelector, string(old.UID), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	running := guestOnline(ctx, t, ns, "restarted")
	ip := running.Status.Interfaces[0].IPAddress
	if _, err := framework.WaitHTTP(ctx, "http://"+ip+"/", "restarted", netTimeout); err != nil {
		t.Fatal(err)
	}
	pids, err := framework.QEMUProcesses(running)
	if err != nil || len(pids) != 1 {
		t.Fatalf("want one QEMU process, found %v (%v)", pids, err)
	}
	links, tables, err := framework.GuestNetworkDevices(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(links)
	if !slices.Equal(links, []string{"k6t-eth0", "tap0"}) || len(tables) != 1 {
		t.Fatalf("the pod has links %v and tables %v, want k6t-eth0 and tap0 and one table", links, tables)
	}
	chains, err := framework.NFTRules(pids[0], nftablesIPv4, tables[0])
	if err != nil {
		t.Fatal(err)
	}
	for chain, rules := range chains {
		seen := map[string]bool{}
		for _, r := range rules {
			if seen[r] {
				t.Errorf("chain %s holds the same rule twice: %s", chain, r)
			}
			seen[r] = true
		}
	}
	if len(chains) == 0 {
		t.Errorf("table %s has no chains", tables[0])
	}
}

const nftablesIPv4 = nftables.TableFamilyIPv4
