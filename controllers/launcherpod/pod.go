package launcherpod

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/capability"
	"kubevirt.dev/virt/launcher/layout"
)

// Container names of the launcher pod.
const (
	KernelBootContainer = "kernel-boot"
	// containerDiskPrefix + volume name is the container that holds a
	// container disk for the launcher.
	containerDiskPrefix = "volume-"
)

// UnprivilegedPortStartSysctl is the namespaced sysctl of the lowest port
// that needs CAP_NET_BIND_SERVICE; the pod sets it to 0.
const UnprivilegedPortStartSysctl = "net.ipv4.ip_unprivileged_port_start"

// StartupTimeoutSeconds bounds a launcher's start (layout.StartupTimeout):
// the launcher's own bound, and its startup probe's when it has one.
const StartupTimeoutSeconds = int32(layout.StartupTimeout / time.Second)

// Paths of the binaries the launcher image ships.
const (
	LauncherBinary    = "/usr/bin/virt-launcher"
	ImageCopyBinary   = "/usr/bin/virt-imagecopy"
	defaultDiskSource = "/disk"
)

// Config is what the pod takes from virt-controller's configuration rather
// than from the VMI.
type Config struct {
	// LauncherImage runs virt-launcher and provides virt-imagecopy, the
	// tool the containers of container-disk and kernel-boot images run.
	LauncherImage string
	// LauncherPullPolicy is the pull policy of the launcher image.
	LauncherPullPolicy corev1.PullPolicy
	// GracePeriodMargin is added to the VMI's grace period for the pod's, so
	// the launcher can still destroy the guest and exit after the guest's own
	// grace period ran out, before the kubelet kills it.
	GracePeriodMargin int64
	// RunAsUser, when set, is the UID (and GID and fsGroup) of every
	// container of the pod; nil runs the images' own users.
	RunAsUser *int64
	// TunDevice requests /dev/net/tun for the launcher container
	// (layout.TunResourceName, virt-handler's device plugin), owned there
	// by RunAsUser: libvirt opens it to attach the guest's NIC to the tap
	// virt-handler made. Launcher pods then schedule only to nodes whose
	// virt-handler advertises the device.
	TunDevice bool
}

// Name is the launcher pod's name. It is a function of the VMI's UID, not a
// generateName: a second create of the same VMI's pod fails with
// AlreadyExists, whatever any controller's cache says.
func Name(vmi *virtv1.VirtualMachineInstance) string {
	h := fnv.New32a()
	h.Write([]byte(vmi.UID))
	return fmt.Sprintf("virt-launcher-%s-%s", vmi.Name, utilrand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))[:5])
}

// New renders the launcher pod of vmi.
func New(vmi *virtv1.VirtualMachineInstance, cfg Config) (*corev1.Pod, error) {
	if cfg.LauncherImage == "" {
		return nil, fmt.Errorf("no launcher image configured")
	}
	resources, err := Resources(vmi)
	if err != nil {
		return nil, fmt.Errorf("resources of VMI %s/%s: %w", vmi.Namespace, vmi.Name, err)
	}
	requestEphemeralStorage(&resources)
	if cfg.TunDevice {
		requestTunDevice(&resources)
	}
	if vmi.Spec.TerminationGracePeriodSeconds == nil {
		// virt-apiserver defaults and requires it: this VMI did not come
		// through the API.
		return nil, fmt.Errorf("VMI %s/%s has no terminationGracePeriodSeconds", vmi.Namespace, vmi.Name)
	}
	grace := *vmi.Spec.TerminationGracePeriodSeconds
	v := newVolumes(vmi, cfg)

	compute := corev1.Container{
		Name:            layout.ComputeContainer,
		Image:           cfg.LauncherImage,
		ImagePullPolicy: cfg.LauncherPullPolicy,
		Command:         []string{LauncherBinary},
		Args: append([]string{
			"--vmi-namespace", vmi.Namespace,
			"--vmi-name", vmi.Name,
			"--vmi-uid", string(vmi.UID),
			"--grace-period-seconds", strconv.FormatInt(grace, 10),
		}, append(containerDiskArgs(vmi), kernelBootArgs(vmi)...)...),
		// Before the kubelet starts the next container, which runs them.
		Env:           libvirtDebugEnv(vmi),
		Lifecycle:     installTools(vmi),
		Resources:     resources,
		VolumeMounts:  v.computeMounts,
		VolumeDevices: v.computeDevices,
		// The VMI's probes check the guest, not before the launcher is
		// ready (startupProbe). The hand-off waits for none of them
		// (vmipod.LauncherRunning): the node waits for the launcher's
		// ready file, and a guest probe cannot pass before the node
		// started the guest.
		StartupProbe:             startupProbe(vmi),
		ReadinessProbe:           guestProbe(vmi, vmi.Spec.ReadinessProbe),
		LivenessProbe:            guestProbe(vmi, vmi.Spec.LivenessProbe),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          containerSecurityContext(),
	}

	labels := map[string]string{}
	for k, val := range vmi.Labels {
		labels[k] = val
	}
	labels[virtv1.CreatedByLabel] = string(vmi.UID)
	labels[virtv1.VMINameLabel] = vmi.Name
	labels[virtv1.ComponentLabel] = virtv1.LauncherComponent

	hostname := vmi.Spec.Hostname
	if hostname == "" {
		hostname = vmi.Name
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      Name(vmi),
			Namespace: vmi.Namespace,
			Labels:    labels,
			Annotations: map[string]string{
				// kubectl logs and exec pick the launcher without -c.
				"kubectl.kubernetes.io/default-container": layout.ComputeContainer,
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, virtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To(grace + cfg.GracePeriodMargin),
			// The launcher never talks to the Kubernetes API: the node daemon
			// drives it over its socket.
			AutomountServiceAccountToken: ptr.To(false),
			// Empty but with a serviceAccount volume, whose token is the
			// pod's account's.
			ServiceAccountName: v.serviceAccount,
			EnableServiceLinks: ptr.To(false),
			// libvirt daemonizes QEMU, so QEMU's parent is PID 1 of the
			// container. The launcher is no init and would leave exited
			// QEMUs as zombies, on which libvirt then waits out its kill
			// timeouts (80 s per shutdown, 40 s per start measured). With
			// a shared PID namespace the pod's pause process is PID 1 and
			// reaps them.
			ShareProcessNamespace: ptr.To(true),
			NodeSelector:          nodeSelector(vmi),
			Affinity:              vmi.Spec.Affinity.DeepCopy(),
			Tolerations:           append([]corev1.Toleration(nil), vmi.Spec.Tolerations...),
			PriorityClassName:     vmi.Spec.PriorityClassName,
			SchedulerName:         vmi.Spec.SchedulerName,
			Hostname:              hostname,
			Subdomain:             vmi.Spec.Subdomain,
			ImagePullSecrets:      v.pullSecrets,
			SecurityContext:       podSecurityContext(cfg.RunAsUser),
			// No init containers: each would cost the pod's start a
			// second or so (the kubelet notices one has ended at its
			// next relist of the runtime's containers). The launcher
			// first: the kubelet starts the containers in this order,
			// each after the one before has started and run its
			// postStart hook, so libvirt starts while the images of
			// the kernel boot and container disks are pulled, and the
			// tools they run are installed before they start.
			Containers: append(append([]corev1.Container{compute}, kernelBootContainer(vmi, resources)...), containerDisks(vmi, resources)...),
			// Ready only where the guest runs (controllers/guestpod): a
			// Service never sends the guest's traffic to a migration's
			// target before the switch-over, nor to its source after.
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: virtv1.GuestInPodCondition}},
			Volumes:        v.volumes,
		},
	}
	// The launcher pods carry the VMI's labels, so a constraint that
	// selects VMIs by label counts their pods.
	pod.Spec.TopologySpreadConstraints = deepCopySpread(vmi.Spec.TopologySpreadConstraints)
	return pod, nil
}

// deepCopySpread copies constraints, whose label selectors the pod must not
// share with the VMI in the informer's cache.
func deepCopySpread(constraints []corev1.TopologySpreadConstraint) []corev1.TopologySpreadConstraint {
	if constraints == nil {
		return nil
	}
	out := make([]corev1.TopologySpreadConstraint, len(constraints))
	for i := range constraints {
		constraints[i].DeepCopyInto(&out[i])
	}
	return out
}

// nodeSelector is the VMI's plus the label virt-handler puts on the nodes it
// runs on (a launcher on a node without a node daemon would never be
// started) and the capability labels of what the VMI needs (a node without
// KVM cannot run a Hyper-V passthrough guest).
func nodeSelector(vmi *virtv1.VirtualMachineInstance) map[string]string {
	sel := capability.NodeSelector(&vmi.Spec)
	sel[virtv1.SchedulableNodeLabel] = "true"
	for k, v := range vmi.Spec.NodeSelector {
		sel[k] = v
	}
	return sel
}

// installTools is the postStart hook that installs virt-imagecopy, from the
// launcher's image, into the tools volume, for the containers of images
// that hold nothing but files (kernel boot, container disks) to run: the
// kubelet starts the next container of the pod only once the hook has
// returned. nil when the pod has no such container.
func installTools(vmi *virtv1.VirtualMachineInstance) *corev1.Lifecycle {
	if kernelBoot(vmi) == nil && len(containerDiskArgs(vmi)) == 0 {
		return nil
	}
	return &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{ImageCopyBinary, "install", layout.ToolsDir}},
	}}
}

// kernelBootContainer holds the kernel-boot image's kernel and initrd for
// the launcher, which links them (kernelboot.Link) where the domain opens
// them, as a container disk's container holds its disk: nothing is copied.
func kernelBootContainer(vmi *virtv1.VirtualMachineInstance, compute corev1.ResourceRequirements) []corev1.Container {
	kb := kernelBoot(vmi)
	if kb == nil {
		return nil
	}
	cmd := []string{toolPath(), "hold"}
	for _, f := range kernelBootFiles(kb) {
		cmd = append(cmd, f.path, layout.KernelBootRecord(layout.KernelBootDir, f.name))
	}
	return []corev1.Container{{
		Name:            KernelBootContainer,
		Image:           kb.Image,
		ImagePullPolicy: kb.ImagePullPolicy,
		Command:         append(cmd, LauncherBinary),
		Resources:       holderRequirements(compute),
		VolumeMounts: []corev1.VolumeMount{readOnlyToolsMount(),
			{Name: layout.KernelBootVolume, MountPath: layout.KernelBootDir}},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          containerSecurityContext(),
	}}
}

// kernelBootArgs name the files the kernel-boot container offers to the
// launcher, which marks its pod ready only once it linked them.
func kernelBootArgs(vmi *virtv1.VirtualMachineInstance) []string {
	var args []string
	for _, f := range kernelBootFiles(kernelBoot(vmi)) {
		args = append(args, "--kernel-boot-file", f.name)
	}
	return args
}

// kernelBootFile is a file of a kernel-boot image: its name below
// layout.KernelBootDir and its path in the image.
type kernelBootFile struct{ name, path string }

// kernelBootFiles are the files kb names (none for nil): the initrd only
// when the image has one.
func kernelBootFiles(kb *virtv1.KernelBootContainer) []kernelBootFile {
	var files []kernelBootFile
	if kb != nil && kb.KernelPath != "" {
		files = append(files, kernelBootFile{layout.KernelName, kb.KernelPath})
	}
	if kb != nil && kb.InitrdPath != "" {
		files = append(files, kernelBootFile{layout.InitrdName, kb.InitrdPath})
	}
	return files
}

func kernelBoot(vmi *virtv1.VirtualMachineInstance) *virtv1.KernelBootContainer {
	fw := vmi.Spec.Domain.Firmware
	if fw == nil || fw.KernelBoot == nil {
		return nil
	}
	return fw.KernelBoot.Container
}

// podSecurityContext runs every container as one unprivileged user whose
// group owns the emptyDirs. The one user is also what lets the launcher and
// QEMU open a container disk through its container's /proc/<pid>/root: the
// kernel allows that to a process that may ptrace-read the container's,
// which, without capabilities on either side, takes the same user.
// Ports below 1024 are open to every user in the pod's network namespace:
// the launcher's DHCP server binds port 67 with no capability. The sysctl
// is one of Kubernetes' safe ones, allowed by every kubelet.
func podSecurityContext(uid *int64) *corev1.PodSecurityContext {
	sc := &corev1.PodSecurityContext{
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		Sysctls:        []corev1.Sysctl{{Name: UnprivilegedPortStartSysctl, Value: "0"}},
	}
	if uid != nil {
		sc.RunAsUser = ptr.To(*uid)
		sc.RunAsGroup = ptr.To(*uid)
		sc.FSGroup = ptr.To(*uid)
		sc.RunAsNonRoot = ptr.To(*uid != 0)
	}
	return sc
}

// containerSecurityContext drops every capability: guests run under TCG,
// which needs no /dev/kvm, and virt-handler makes the guest's tap in the
// pod's network namespace, so the launcher needs no CAP_NET_ADMIN; it only
// opens the tap through /dev/net/tun (Config.TunDevice).
func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		Privileged:               ptr.To(false),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}
