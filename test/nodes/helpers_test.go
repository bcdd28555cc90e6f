package nodes

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// Helpers for the package's tests, meant for reuse by tests added later.

// hostnameLabel is the label every node carries with its name: what a
// nodeSelector pins a guest or a pod to one node with.
const hostnameLabel = "kubernetes.io/hostname"

// nodeReadyTimeout bounds a node's way from its kubelet's start to Ready.
const nodeReadyTimeout = 2 * time.Minute

// pinnedVMI is the small test guest of artifacts/examples/vmi-tiny.yaml
// named name, which it prints in its serial marker, with a nodeSelector
// for node (none when node is "").
func pinnedVMI(t *testing.T, name, node string) *virtv1.VirtualMachineInstance {
	t.Helper()
	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vmi.Name = name
	vmi.Labels = map[string]string{"app": name}
	kb := vmi.Spec.Domain.Firmware.KernelBoot
	kb.KernelArgs = strings.ReplaceAll(kb.KernelArgs, "virt.hostname=vmi-tiny", "virt.hostname="+name)
	if node != "" {
		vmi.Spec.NodeSelector = map[string]string{hostnameLabel: node}
	}
	return vmi
}

// startPinnedVMI creates pinnedVMI(name, node) in ns and waits until it runs
// on node and its guest printed its serial marker; it returns the running
// VMI and its console.
func startPinnedVMI(ctx context.Context, t *testing.T, ns, name, node string) (*virtv1.VirtualMachineInstance, *framework.SerialConsole) {
	t.Helper()
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, pinnedVMI(t, name, node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return waitGuestOn(ctx, t, ns, name, node)
}

// waitGuestOn waits until VMI ns/name runs on node and its guest printed
// its serial marker.
func waitGuestOn(ctx context.Context, t *testing.T, ns, name, node string) (*virtv1.VirtualMachineInstance, *framework.SerialConsole) {
	t.Helper()
	vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if vmi.Status.NodeName != node {
		t.Fatalf("VMI %s runs on node %q, want %q", name, vmi.Status.NodeName, node)
	}
	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != node {
		t.Fatalf("the launcher pod of VMI %s is on node %q, want %q", name, pod.Spec.NodeName, node)
	}
	serial := cluster.FollowSerial(t, pod)
	if err := serial.WaitFor(ctx, framework.GuestReadyMarker+" "+name, 2*time.Minute); err != nil {
		t.Fatalf("%v\nserial console so far:\n%s", err, serial.Output())
	}
	return vmi, serial
}

// startHTTPD runs the test HTTP server (hack/testhttpd) as pod name of ns
// on node, labelled app=name, and returns it once ready. Its /fetch?HOST:PORT
// makes it a client on that node.
func startHTTPD(ctx context.Context, t *testing.T, ns, name, node string) *corev1.Pod {
	t.Helper()
	_, err := cluster.Kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{hostnameLabel: node},
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
	pod, err := cluster.WaitPodReady(ctx, ns, "app="+name, "", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != node {
		t.Fatalf("pod %s runs on node %q, want %q", name, pod.Spec.NodeName, node)
	}
	return pod
}

// httpdURL is the URL of path on pod's test HTTP server.
func httpdURL(pod *corev1.Pod, path string) string {
	return "http://" + net.JoinHostPort(pod.Status.PodIP, "8080") + path
}

// waitNodeReady waits until node's Ready condition is True.
func waitNodeReady(ctx context.Context, node string) error {
	return framework.WaitFor(ctx, nodeReadyTimeout, "node "+node+" Ready", func(ctx context.Context) (bool, error) {
		n, err := cluster.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

// restartNode starts a node a test killed or stopped and waits until it is
// Ready: for a t.Cleanup, so the tests after it find every node up.
func restartNode(t *testing.T, node string) {
	t.Helper()
	ctx := context.Background()
	if err := cluster.StartNode(ctx, node); err != nil {
		t.Errorf("start node %s again: %v", node, err)
		return
	}
	if err := waitNodeReady(ctx, node); err != nil {
		t.Error(err)
	}
}
