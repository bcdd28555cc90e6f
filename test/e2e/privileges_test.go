package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestLauncherPodSecurityBaseline runs a guest in a namespace whose pods
// the kube-apiserver's PodSecurity admission holds to the baseline profile:
// no hostPath, no host namespaces, no added capabilities, safe sysctls only.
// Until issue 23 every launcher pod mounted a node-wide hostPath (the QEMU
// capabilities cache the launchers wrote), and was refused there.
func TestLauncherPodSecurityBaseline(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline","pod-security.kubernetes.io/enforce-version":"latest"}}}`)
	if _, err := cluster.Kube.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	// The admission is on and enforces here: a pod with a hostPath (as the
	// launcher pods had) is refused.
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hostpath-probe"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "localhost/pause:dev"}},
			Volumes: []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/virt/launcher-capabilities-cache"}}}},
		},
	}
	_, err := cluster.Kube.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "baseline") {
		t.Fatalf("a hostPath pod in a namespace enforcing baseline: %v; want it forbidden by PodSecurity baseline", err)
	}

	example := filepath.Join(cluster.Root, "artifacts", "examples", "vmi-tiny.yaml")
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", example); err != nil {
		t.Fatal(err)
	}
	vmi, err := cluster.WaitVMIRunning(ctx, ns, "vmi-tiny")
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			t.Errorf("launcher pod volume %s is a hostPath (%s)", v.Name, v.HostPath.Path)
		}
	}
	serial := cluster.FollowSerial(t, pod)
	if err := serial.WaitFor(ctx, framework.GuestReadyMarker+" vmi-tiny", 2*time.Minute); err != nil {
		t.Fatalf("%v\nserial console so far:\n%s", err, serial.Output())
	}

	// The launcher seeded libvirt from its image and libvirt took the
	// entry: its capabilities came back without a QEMU probe (seconds).
	logs, err := cluster.Kube.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: layout.ComputeContainer}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seeded := regexp.MustCompile(`"QEMU capabilities seeded" seed="[^"]*" entries=(\d+) vouched=(\d+)`).FindSubmatch(logs)
	if seeded == nil || string(seeded[1]) == "0" || string(seeded[1]) != string(seeded[2]) {
		t.Errorf("the launcher did not seed QEMU's capabilities from its image (entries, vouched): %q\n%s", seeded, logs)
	}
	m := regexp.MustCompile(`"libvirt capabilities" elapsed="([^"]+)" seedKept=(\d+) seeded=(\d+)`).FindSubmatch(logs)
	if m == nil || string(m[2]) != string(m[3]) {
		t.Errorf("libvirt did not take the image's capabilities as seeded (elapsed, kept, seeded): %q\n%s", m, logs)
	} else {
		t.Logf("libvirt's capabilities took %s with the image's seed (%s of %s entries kept)", m[1], m[2], m[3])
	}

	if err := cluster.DeleteVMI(ctx, t, ns, "vmi-tiny", deleteTimeout); err != nil {
		t.Error(err)
	}
}

// TestControlPlaneRunsAsNonRoot checks virt-apiserver and virt-controller
// run without privilege: their pods demand a non-root user, and the
// processes the kernel runs have a non-zero uid, no capabilities and no way
// to gain any.
func TestControlPlaneRunsAsNonRoot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, name := range []string{"virt-apiserver", "virt-controller"} {
		t.Run(name, func(t *testing.T) {
			d, err := cluster.Kube.AppsV1().Deployments("virt-system").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			psc := d.Spec.Template.Spec.SecurityContext
			if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
				t.Errorf("pod security context %+v: want runAsNonRoot and a non-zero runAsUser", psc)
			}
			pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{
				LabelSelector: "virtualization.kubevirt.io/component=" + name, FieldSelector: "status.phase=Running"})
			if err != nil {
				t.Fatal(err)
			}
			if len(pods.Items) == 0 {
				t.Fatalf("no running pod of %s", name)
			}
			for _, pod := range pods.Items {
				pid, err := framework.ContainerProcess(&pod, name)
				if err != nil {
					t.Fatal(err)
				}
				st, err := procStatus(pid)
				if err != nil {
					t.Fatal(err)
				}
				for _, field := range []string{"Uid", "Gid"} {
					for _, id := range strings.Fields(st[field]) {
						if id == "0" {
							t.Errorf("pod %s: process %d runs with %s %s", pod.Name, pid, field, st[field])
						}
					}
				}
				for _, field := range []string{"CapEff", "CapPrm", "CapBnd"} {
					if v, err := strconv.ParseUint(st[field], 16, 64); err != nil || v != 0 {
						t.Errorf("pod %s: process %d has %s %s, want none", pod.Name, pid, field, st[field])
					}
				}
				if st["NoNewPrivs"] != "1" {
					t.Errorf("pod %s: process %d has NoNewPrivs %q, want 1 (allowPrivilegeEscalation: false)", pod.Name, pid, st["NoNewPrivs"])
				}
				t.Logf("pod %s: process %d Uid %s Gid %s CapEff %s", pod.Name, pid, st["Uid"], st["Gid"], st["CapEff"])
			}
		})
	}
}

// procStatus reads /proc/<pid>/status as a map of its fields.
func procStatus(pid int) (map[string]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out, nil
}
