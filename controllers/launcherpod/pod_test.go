package launcherpod

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

var testConfig = Config{
	LauncherImage:      "virt-launcher:dev",
	LauncherPullPolicy: corev1.PullIfNotPresent,
	GracePeriodMargin:  15,
	RunAsUser:          ptr.To[int64](107),
}

func newVMI(mutate func(*virtv1.VirtualMachineInstance)) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm1", UID: "1111-2222", Labels: map[string]string{"app": "web"}},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{
				Memory: &virtv1.Memory{Guest: ptr.To(resource.MustParse("128Mi"))},
			},
			TerminationGracePeriodSeconds: ptr.To[int64](30),
		},
	}
	if mutate != nil {
		mutate(vmi)
	}
	return vmi
}

func TestNewMinimal(t *testing.T) {
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		v.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		v.Spec.PriorityClassName = "high"
		v.Spec.SchedulerName = "sched"
		v.Spec.Subdomain = "sub"
	})
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name != Name(vmi) || pod.Namespace != "ns" {
		t.Errorf("pod is %s/%s, want ns/%s", pod.Namespace, pod.Name, Name(vmi))
	}
	wantLabels := map[string]string{
		"app":                 "web",
		virtv1.CreatedByLabel: "1111-2222",
		virtv1.VMINameLabel:   "vm1",
		virtv1.ComponentLabel: virtv1.LauncherComponent,
	}
	if d := cmp.Diff(wantLabels, pod.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if len(pod.OwnerReferences) != 1 {
		t.Fatalf("owner references: %v", pod.OwnerReferences)
	}
	ref := pod.OwnerReferences[0]
	if ref.UID != vmi.UID || ref.Kind != "VirtualMachineInstance" || ref.APIVersion != "virtualization.kubevirt.io/v1" ||
		!ptr.Deref(ref.Controller, false) || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("owner reference %+v does not make the VMI the blocking controller", ref)
	}
	spec := pod.Spec
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s", spec.RestartPolicy)
	}
	if got := ptr.Deref(spec.TerminationGracePeriodSeconds, 0); got != 45 {
		t.Errorf("terminationGracePeriodSeconds = %d, want 30 + 15", got)
	}
	if !ptr.Deref(spec.ShareProcessNamespace, false) {
		t.Errorf("the pod does not share its PID namespace: nobody would reap the launcher's orphaned QEMU")
	}
	if ptr.Deref(spec.AutomountServiceAccountToken, true) {
		t.Errorf("the service account token is mounted")
	}
	wantSel := map[string]string{"disk": "ssd", virtv1.SchedulableNodeLabel: "true"}
	if d := cmp.Diff(wantSel, spec.NodeSelector); d != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", d)
	}
	if len(spec.Tolerations) != 1 || spec.PriorityClassName != "high" || spec.SchedulerName != "sched" {
		t.Errorf("scheduling fields not copied: %+v", spec)
	}
	if spec.Hostname != "vm1" || spec.Subdomain != "sub" {
		t.Errorf("hostname %q subdomain %q, want vm1 and sub", spec.Hostname, spec.Subdomain)
	}
	sc := spec.SecurityContext
	if ptr.Deref(sc.RunAsUser, 0) != 107 || ptr.Deref(sc.FSGroup, 0) != 107 || !ptr.Deref(sc.RunAsNonRoot, false) {
		t.Errorf("pod security context %+v", sc)
	}
	// The launcher's DHCP server binds port 67 as uid 107, with no capability.
	if want := []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}}; !slices.Equal(sc.Sysctls, want) {
		t.Errorf("pod sysctls %v, want %v", sc.Sysctls, want)
	}

	// No init container: each costs the start a relist of the kubelet.
	if len(spec.InitContainers) != 0 {
		t.Errorf("init containers %v, want none", spec.InitContainers)
	}

	if len(spec.Containers) != 1 {
		t.Fatalf("containers %v", spec.Containers)
	}
	c := spec.Containers[0]
	if c.Name != "compute" || c.Image != testConfig.LauncherImage || !slices.Equal(c.Command, []string{"/usr/bin/virt-launcher"}) {
		t.Errorf("compute container %s %s %v", c.Name, c.Image, c.Command)
	}
	wantArgs := []string{"--vmi-namespace", "ns", "--vmi-name", "vm1", "--vmi-uid", "1111-2222", "--grace-period-seconds", "30"}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args %v, want %v", c.Args, wantArgs)
	}
	// The launcher bounds its own start; an exec a second would be paid
	// for nothing.
	if c.StartupProbe != nil {
		t.Errorf("startup probe %+v on a VMI without probes", c.StartupProbe)
	}
	// Nothing to install the tools for.
	if c.Lifecycle != nil {
		t.Errorf("lifecycle hooks %+v of a launcher without kernel boot or container disks", c.Lifecycle)
	}
	if c.ReadinessProbe != nil || c.LivenessProbe != nil {
		t.Errorf("a probe that runs for the pod's whole life costs CPU on every node: readiness %+v liveness %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	if csc := c.SecurityContext; ptr.Deref(csc.Privileged, true) || ptr.Deref(csc.AllowPrivilegeEscalation, true) ||
		csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("compute security context %+v", csc)
	}
	wantMounts := map[string]string{layout.PrivateVolume: layout.PrivateDir, layout.DisksVolume: layout.DisksDir, layout.ToolsVolume: layout.ToolsDir}
	if d := cmp.Diff(wantMounts, mounts(c)); d != "" {
		t.Errorf("compute mounts (-want +got):\n%s", d)
	}
	for _, v := range spec.Volumes {
		if v.EmptyDir == nil {
			t.Errorf("volume %s is not an emptyDir", v.Name)
		}
	}
	if len(spec.Volumes) != 3 {
		t.Errorf("volumes %v, want private, disks and tools", spec.Volumes)
	}
}

// TunDevice asks virt-handler's device plugin for /dev/net/tun: one in the
// compute container's requests and limits, nothing else changed.
func TestNewTunDevice(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name       string
		tun        bool
		vmiLimits  corev1.ResourceList
		wantReq    corev1.ResourceList
		wantLimits corev1.ResourceList
	}{{
		name:       "requested",
		tun:        true,
		wantReq:    corev1.ResourceList{corev1.ResourceMemory: q("361Mi"), corev1.ResourceCPU: q("100m"), corev1.ResourceEphemeralStorage: q("128Mi"), layout.TunResourceName: q("1")},
		wantLimits: corev1.ResourceList{layout.TunResourceName: q("1")},
	}, {
		name:       "requested beside the VMI's limits",
		tun:        true,
		vmiLimits:  corev1.ResourceList{corev1.ResourceCPU: q("500m")},
		wantReq:    corev1.ResourceList{corev1.ResourceMemory: q("361Mi"), corev1.ResourceCPU: q("500m"), corev1.ResourceEphemeralStorage: q("128Mi"), layout.TunResourceName: q("1")},
		wantLimits: corev1.ResourceList{corev1.ResourceCPU: q("500m"), layout.TunResourceName: q("1")},
	}, {
		name:    "not requested",
		wantReq: corev1.ResourceList{corev1.ResourceMemory: q("361Mi"), corev1.ResourceCPU: q("100m"), corev1.ResourceEphemeralStorage: q("128Mi")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig
			cfg.TunDevice = tt.tun
			pod, err := New(newVMI(func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Resources.Limits = tt.vmiLimits }), cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := pod.Spec.Containers[0].Resources
			compare(t, "requests", tt.wantReq, res.Requests)
			compare(t, "limits", tt.wantLimits, res.Limits)
			for _, c := range pod.Spec.Containers[1:] {
				if _, ok := c.Resources.Limits[layout.TunResourceName]; ok {
					t.Errorf("container %s has resources %+v: only the launcher opens the device", c.Name, c.Resources)
				}
			}
		})
	}
}

func TestNewVolumes(t *testing.T) {
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Volumes = []virtv1.Volume{
			{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{
				Image: "disk:1", ImagePullPolicy: corev1.PullNever, ImagePullSecret: "regcred"}}},
			{Name: "data", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{
				Image: "disk:2", Path: "/images/data.qcow2", ImagePullSecret: "regcred"}}},
			{Name: "claim", VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: claim("pvc1")}},
			{Name: "ci", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{
				SecretRef: &corev1.LocalObjectReference{Name: "ud"}, NetworkDataSecretRef: &corev1.LocalObjectReference{Name: "nd"}}}},
			{Name: "scratch", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}},
		}
		v.Spec.Domain.Firmware = &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{Container: &virtv1.KernelBootContainer{
			Image: "kernel:1", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd", ImagePullSecret: "kcred"}}}
	})
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	type container struct {
		Name, Image string
		Pull        corev1.PullPolicy
		Command     []string
	}
	list := func(cs []corev1.Container) []container {
		var out []container
		for _, c := range cs {
			out = append(out, container{c.Name, c.Image, c.ImagePullPolicy, c.Command})
		}
		return out
	}
	if len(pod.Spec.InitContainers) != 0 {
		t.Errorf("init containers %v, want none", list(pod.Spec.InitContainers))
	}
	// The launcher installs the tools the next containers run before the
	// kubelet starts them.
	if h := pod.Spec.Containers[0].Lifecycle; h == nil || h.PostStart == nil || h.PostStart.Exec == nil ||
		!slices.Equal(h.PostStart.Exec.Command, []string{"/usr/bin/virt-imagecopy", "install", "/var/run/virt-tools"}) {
		t.Errorf("compute lifecycle %+v, want a postStart hook installing the tools", h)
	}
	// The kernel-boot image and each container disk's run beside the
	// launcher, holding their files until the launcher has gone: nothing
	// is copied.
	wantContainers := []container{
		{"compute", "virt-launcher:dev", corev1.PullIfNotPresent, []string{"/usr/bin/virt-launcher"}},
		{"kernel-boot", "kernel:1", "", []string{"/var/run/virt-tools/virt-imagecopy", "hold",
			"/boot/vmlinuz", "/var/run/virt-kernel-boot/kernel.json", "/boot/initrd", "/var/run/virt-kernel-boot/initrd.json", "/usr/bin/virt-launcher"}},
		{"volume-root", "disk:1", corev1.PullNever, []string{"/var/run/virt-tools/virt-imagecopy", "hold",
			"/disk", "/var/run/virt-disks/root/containerdisk.json", "/usr/bin/virt-launcher"}},
		{"volume-data", "disk:2", "", []string{"/var/run/virt-tools/virt-imagecopy", "hold",
			"/images/data.qcow2", "/var/run/virt-disks/data/containerdisk.json", "/usr/bin/virt-launcher"}},
	}
	if d := cmp.Diff(wantContainers, list(pod.Spec.Containers)); d != "" {
		t.Errorf("containers (-want +got):\n%s", d)
	}
	// The launcher is ready only once all records are there.
	if got, want := pod.Spec.Containers[0].Args[8:], []string{"--container-disk", "root", "--container-disk", "data",
		"--kernel-boot-file", "kernel", "--kernel-boot-file", "initrd"}; !slices.Equal(got, want) {
		t.Errorf("launcher args after the VMI's: %v, want %v", got, want)
	}
	for _, c := range pod.Spec.Containers[1:] {
		wantMounts := []corev1.VolumeMount{
			{Name: layout.ToolsVolume, MountPath: layout.ToolsDir, ReadOnly: true},
			{Name: layout.DisksVolume, MountPath: layout.DisksDir},
		}
		if c.Name == KernelBootContainer {
			wantMounts[1] = corev1.VolumeMount{Name: layout.KernelBootVolume, MountPath: layout.KernelBootDir}
		}
		if d := cmp.Diff(wantMounts, c.VolumeMounts); d != "" {
			t.Errorf("%s mounts (-want +got):\n%s", c.Name, d)
		}
		// A CPU limit above the request in a Burstable pod: a 10m quota
		// slows their start to seconds (TestHolderQOS).
		want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
		compare(t, c.Name+" requests", want, c.Resources.Requests)
		compare(t, c.Name+" limits", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("16Mi")}, c.Resources.Limits)
		// The pod's user (107) and no capability: what lets the launcher
		// and QEMU, as the same user, open the disk through
		// /proc/<pid>/root.
		if csc := c.SecurityContext; csc.RunAsUser != nil || ptr.Deref(csc.AllowPrivilegeEscalation, true) ||
			csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("%s security context %+v", c.Name, csc)
		}
	}
	wantMounts := map[string]string{
		layout.PrivateVolume:      layout.PrivateDir,
		layout.DisksVolume:        layout.DisksDir,
		layout.KernelBootVolume:   layout.KernelBootDir,
		layout.ToolsVolume:        layout.ToolsDir,
		"pvc-2":                   "/var/run/virt-pvcs/claim",
		"cloudinit-3-userdata":    "/var/run/virt-secrets/ci/userdata",
		"cloudinit-3-networkdata": "/var/run/virt-secrets/ci/networkdata",
	}
	if d := cmp.Diff(wantMounts, mounts(pod.Spec.Containers[0])); d != "" {
		t.Errorf("compute mounts (-want +got):\n%s", d)
	}
	vols := map[string]corev1.VolumeSource{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v.VolumeSource
	}
	if pvc := vols["pvc-2"].PersistentVolumeClaim; pvc == nil || pvc.ClaimName != "pvc1" {
		t.Errorf("pvc volume %+v", vols["pvc-2"])
	}
	if s := vols["cloudinit-3-userdata"].Secret; s == nil || s.SecretName != "ud" {
		t.Errorf("user-data secret volume %+v", vols["cloudinit-3-userdata"])
	}
	if s := vols["cloudinit-3-networkdata"].Secret; s == nil || s.SecretName != "nd" {
		t.Errorf("network-data secret volume %+v", vols["cloudinit-3-networkdata"])
	}
	wantSecrets := []corev1.LocalObjectReference{{Name: "kcred"}, {Name: "regcred"}}
	if d := cmp.Diff(wantSecrets, pod.Spec.ImagePullSecrets); d != "" {
		t.Errorf("image pull secrets (-want +got):\n%s", d)
	}
}

func claim(name string) *virtv1.PersistentVolumeClaimVolumeSource {
	c := &virtv1.PersistentVolumeClaimVolumeSource{}
	c.ClaimName = name
	return c
}

func mounts(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, vm := range c.VolumeMounts {
		m[vm.Name] = vm.MountPath
	}
	return m
}

func TestName(t *testing.T) {
	a := newVMI(nil)
	b := newVMI(func(v *virtv1.VirtualMachineInstance) { v.UID = "3333-4444" })
	if Name(a) != Name(a.DeepCopy()) {
		t.Errorf("Name is not a function of the VMI")
	}
	if Name(a) == Name(b) {
		t.Errorf("two VMIs of one name but different UIDs share pod name %s", Name(a))
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(newVMI(nil), Config{}); err == nil {
		t.Errorf("no error without a launcher image")
	}
	if _, err := New(newVMI(func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Memory = nil }), testConfig); err == nil {
		t.Errorf("no error without any guest memory")
	}
}

// A VMI that did not come through virt-apiserver lacks its defaults: the
// builder says so instead of guessing the grace period.
func TestNewRefusesAnUndefaultedVMI(t *testing.T) {
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) { v.Spec.TerminationGracePeriodSeconds = nil })
	if _, err := New(vmi, testConfig); err == nil {
		t.Error("New rendered a pod for a VMI without terminationGracePeriodSeconds")
	}
}

// A container disk's container is named after its volume, by index where the
// name would pass a container name's 63 characters.
func TestContainerDiskName(t *testing.T) {
	long := strings.Repeat("v", 63)
	if got := containerDiskName(3, "root"); got != "volume-root" {
		t.Errorf("containerDiskName(root) = %q", got)
	}
	if got := containerDiskName(3, long); got != "volume-3" {
		t.Errorf("containerDiskName of a 63-character volume = %q, want volume-3", got)
	}
	if got := containerDiskName(2, "vmi-shared_disk"); got != "volume-2" {
		t.Errorf("containerDiskName of a volume with an underscore = %q, want volume-2", got)
	}
}

// The volume names KubeVirt's users write and the API takes (underscores,
// capitals) render a pod Kubernetes takes: every container and volume name
// a DNS label, every mount below its root with the volume's name as one
// path element.
func TestNewVolumeNamesKubeVirtAllows(t *testing.T) {
	names := []string{"vmi-shared_disk", "Data_PVC", "CI_x"}
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Volumes = []virtv1.Volume{
			{Name: names[0], VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "disk:1"}}},
			{Name: names[1], VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: claim("windows_pvc")}},
			{Name: names[2], VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{
				SecretRef: &corev1.LocalObjectReference{Name: "ud"}, NetworkDataSecretRef: &corev1.LocalObjectReference{Name: "nd"}}}},
		}
	})
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	label := func(what, name string) {
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Errorf("%s %q is no DNS label: %v", what, name, errs)
		}
	}
	mounts := map[string]bool{}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		label("container", c.Name)
		for _, m := range c.VolumeMounts {
			label("volume mount of "+c.Name, m.Name)
			if filepath.Clean(m.MountPath) != m.MountPath {
				t.Errorf("mount path %q is not clean", m.MountPath)
			}
			for _, n := range names {
				if strings.Contains(m.MountPath, n) {
					mounts[n] = true
					if !strings.Contains(m.MountPath, "/"+n+"/") && !strings.HasSuffix(m.MountPath, "/"+n) {
						t.Errorf("mount path %q holds %q other than as a path element", m.MountPath, n)
					}
				}
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		label("volume", v.Name)
	}
	for _, n := range names[1:] {
		if !mounts[n] {
			t.Errorf("no mount for volume %q", n)
		}
	}
}

// TestNewNodeSelectorCapabilities: a VMI that needs a node capability gets
// a pod that lands only where a node reports it.
func TestNewNodeSelectorCapabilities(t *testing.T) {
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Domain.Features = &virtv1.Features{HypervPassthrough: &virtv1.HyperVPassthrough{}}
		v.Spec.Domain.Devices.Interfaces = []virtv1.Interface{{Name: "default", Model: "igb"}}
	})
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		virtv1.SchedulableNodeLabel:                     "true",
		"virtualization.kubevirt.io/capability-kvm":     "true",
		"virtualization.kubevirt.io/capability-nic-igb": "true",
	}
	if d := cmp.Diff(want, pod.Spec.NodeSelector); d != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", d)
	}
}

// TestNewScheduling: each of the VMI's scheduling fields reaches the
// launcher pod, which is what the scheduler places; a field left behind
// would place the guest where its VMI says it must not run.
func TestNewScheduling(t *testing.T) {
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
		}}},
	}}
	tolerations := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "vms",
		Effect: corev1.TaintEffectNoSchedule}}
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
		WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	tests := []struct {
		name   string
		mutate func(*virtv1.VirtualMachineInstance)
		check  func(t *testing.T, spec corev1.PodSpec)
	}{{
		name: "nodeSelector",
		mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-2"}
		},
		check: func(t *testing.T, spec corev1.PodSpec) {
			if spec.NodeSelector["kubernetes.io/hostname"] != "node-2" || spec.NodeSelector[virtv1.SchedulableNodeLabel] != "true" {
				t.Errorf("nodeSelector %v", spec.NodeSelector)
			}
		},
	}, {
		name:   "affinity",
		mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.Affinity = affinity.DeepCopy() },
		check: func(t *testing.T, spec corev1.PodSpec) {
			if d := cmp.Diff(affinity, spec.Affinity); d != "" {
				t.Errorf("affinity (-want +got):\n%s", d)
			}
		},
	}, {
		name:   "tolerations",
		mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.Tolerations = slices.Clone(tolerations) },
		check: func(t *testing.T, spec corev1.PodSpec) {
			if d := cmp.Diff(tolerations, spec.Tolerations); d != "" {
				t.Errorf("tolerations (-want +got):\n%s", d)
			}
		},
	}, {
		name: "topologySpreadConstraints",
		mutate: func(v *virtv1.VirtualMachineInstance) {
			for _, c := range spread {
				v.Spec.TopologySpreadConstraints = append(v.Spec.TopologySpreadConstraints, *c.DeepCopy())
			}
		},
		check: func(t *testing.T, spec corev1.PodSpec) {
			if d := cmp.Diff(spread, spec.TopologySpreadConstraints); d != "" {
				t.Errorf("topologySpreadConstraints (-want +got):\n%s", d)
			}
		},
	}, {
		name:   "priorityClassName",
		mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.PriorityClassName = "vm-critical" },
		check: func(t *testing.T, spec corev1.PodSpec) {
			if spec.PriorityClassName != "vm-critical" {
				t.Errorf("priorityClassName %q", spec.PriorityClassName)
			}
		},
	}, {
		name:   "schedulerName",
		mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.SchedulerName = "vm-scheduler" },
		check: func(t *testing.T, spec corev1.PodSpec) {
			if spec.SchedulerName != "vm-scheduler" {
				t.Errorf("schedulerName %q", spec.SchedulerName)
			}
		},
	}, {
		name:   "none set: the scheduler's defaults",
		mutate: func(*virtv1.VirtualMachineInstance) {},
		check: func(t *testing.T, spec corev1.PodSpec) {
			if spec.Affinity != nil || spec.Tolerations != nil || spec.TopologySpreadConstraints != nil ||
				spec.PriorityClassName != "" || spec.SchedulerName != "" {
				t.Errorf("scheduling fields set on a VMI without any: %+v", spec)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := newVMI(tt.mutate)
			pod, err := New(vmi, testConfig)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, pod.Spec)
			// The pod owns its copies: a later change to it (the
			// admission of a pod mutates them) leaves the cached VMI as it was.
			if pod.Spec.Affinity != nil && pod.Spec.Affinity == vmi.Spec.Affinity {
				t.Errorf("the pod shares the VMI's affinity")
			}
			if len(pod.Spec.TopologySpreadConstraints) > 0 &&
				pod.Spec.TopologySpreadConstraints[0].LabelSelector == vmi.Spec.TopologySpreadConstraints[0].LabelSelector {
				t.Errorf("the pod shares the VMI's spread constraints' selectors")
			}
		})
	}
}

// The containers holding files for the launcher leave the pod's QoS class
// to the compute container: in a Guaranteed pod their requests equal their
// limits; in any other pod their CPU limit is above their request, and
// there is one in both (a ResourceQuota on limits.cpu requires it).
func TestHolderQOS(t *testing.T) {
	for _, tc := range []struct {
		name       string
		resources  virtv1.ResourceRequirements
		guaranteed bool
	}{
		{name: "burstable", resources: virtv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}},
		{name: "guaranteed", guaranteed: true, resources: virtv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("128Mi")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod, err := New(newVMI(func(v *virtv1.VirtualMachineInstance) {
				v.Spec.Domain.Resources = tc.resources
				v.Spec.Volumes = []virtv1.Volume{{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "disk:1"}}}}
				v.Spec.Domain.Firmware = &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{Container: &virtv1.KernelBootContainer{Image: "kernel:1", KernelPath: "/boot/vmlinuz"}}}
			}), testConfig)
			if err != nil {
				t.Fatal(err)
			}
			if got := guaranteed(pod.Spec.Containers[0].Resources); got != tc.guaranteed {
				t.Fatalf("compute container guaranteed = %v, want %v: %+v", got, tc.guaranteed, pod.Spec.Containers[0].Resources)
			}
			for _, c := range pod.Spec.Containers[1:] {
				if _, ok := c.Resources.Limits[corev1.ResourceCPU]; !ok {
					t.Errorf("%s: no CPU limit (%+v)", c.Name, c.Resources)
				}
				if got := guaranteed(c.Resources); got != tc.guaranteed {
					t.Errorf("%s: guaranteed %v, want %v (%+v)", c.Name, got, tc.guaranteed, c.Resources)
				}
			}
		})
	}
}
