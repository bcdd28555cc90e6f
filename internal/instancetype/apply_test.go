package instancetype

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// u1 is KubeVirt's u1 series: n vCPUs and mem of memory.
func u1(n uint32, mem string) *virtv1.VirtualMachineInstancetypeSpec {
	return &virtv1.VirtualMachineInstancetypeSpec{
		CPU:    virtv1.CPUInstancetype{Guest: n},
		Memory: virtv1.MemoryInstancetype{Guest: resource.MustParse(mem)},
	}
}

// template is what a user writes for a VM with an instancetype: a disk, a
// volume, nothing about size.
func template() *virtv1.VirtualMachineInstanceTemplateSpec {
	return &virtv1.VirtualMachineInstanceTemplateSpec{
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{Devices: virtv1.Devices{
				Disks: []virtv1.Disk{{Name: "root"}, {Name: "iso", DiskDevice: virtv1.DiskDevice{CDRom: &virtv1.CDRomTarget{}}}},
			}},
			Volumes: []virtv1.Volume{
				{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "localhost/disk:dev"}}},
				{Name: "iso", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "localhost/iso:dev"}}},
			},
		},
	}
}

func withInstancetype(it *virtv1.VirtualMachineInstancetypeSpec) *Expansion {
	return &Expansion{Instancetype: it, InstancetypeKind: virtv1.ClusterInstancetypeKind, InstancetypeName: "u1.small"}
}

func paths(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func TestInstancetypeWins(t *testing.T) {
	it := u1(2, "4Gi")
	it.CPU.Model = ptr.To("host-model")
	it.NodeSelector = map[string]string{"size": "large"}
	it.SchedulerName = "bin-packer"
	it.Annotations = map[string]string{"billing": "u1"}
	tmpl := template()
	if errs := withInstancetype(it).Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatalf("Apply: %v", errs)
	}
	d := tmpl.Spec.Domain
	if got := [3]uint32{d.CPU.Sockets, d.CPU.Cores, d.CPU.Threads}; got != [3]uint32{2, 1, 1} {
		t.Errorf("sockets, cores, threads = %v, want 2 sockets (KubeVirt's default layout)", got)
	}
	if d.CPU.Model != "host-model" {
		t.Errorf("cpu.model = %q", d.CPU.Model)
	}
	if d.Memory.Guest.String() != "4Gi" {
		t.Errorf("memory.guest = %s", d.Memory.Guest)
	}
	if _, ok := d.Resources.Requests[corev1.ResourceMemory]; ok {
		t.Errorf("requests.memory set without overcommit: %v", d.Resources.Requests)
	}
	if tmpl.Spec.NodeSelector["size"] != "large" || tmpl.Spec.SchedulerName != "bin-packer" || tmpl.ObjectMeta.Annotations["billing"] != "u1" {
		t.Errorf("placement not applied: %v %q %v", tmpl.Spec.NodeSelector, tmpl.Spec.SchedulerName, tmpl.ObjectMeta.Annotations)
	}
}

func TestOvercommit(t *testing.T) {
	it := u1(1, "2Gi")
	it.Memory.OvercommitPercent = 25
	tmpl := template()
	if errs := withInstancetype(it).Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	req := tmpl.Spec.Domain.Resources.Requests[corev1.ResourceMemory]
	if want := resource.MustParse("1536Mi"); req.Cmp(want) != 0 {
		t.Errorf("requests.memory = %s, want 75%% of 2Gi = %s", req.String(), want.String())
	}
	if tmpl.Spec.Domain.Memory.Guest.String() != "2Gi" {
		t.Errorf("memory.guest = %s, want the instancetype's 2Gi", tmpl.Spec.Domain.Memory.Guest)
	}
}

// TestConflicts: every template field the instancetype owns is refused at
// its own path, all at once.
func TestConflicts(t *testing.T) {
	it := u1(1, "2Gi")
	it.CPU.Model = ptr.To("host-model")
	it.NodeSelector = map[string]string{"a": "b"}
	it.SchedulerName = "s"
	it.Annotations = map[string]string{"k": "v"}
	tmpl := template()
	tmpl.Spec.Domain.CPU = &virtv1.CPU{Sockets: 1, Cores: 2, Threads: 1, Model: "Skylake"}
	tmpl.Spec.Domain.Memory = &virtv1.Memory{Guest: ptr.To(resource.MustParse("1Gi"))}
	tmpl.Spec.Domain.Resources = virtv1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	tmpl.Spec.NodeSelector = map[string]string{"c": "d"}
	tmpl.Spec.SchedulerName = "other"
	tmpl.ObjectMeta.Annotations = map[string]string{"k": "other"}
	errs := withInstancetype(it).Apply(field.NewPath("spec"), tmpl)
	want := []string{
		"spec.template.spec.domain.cpu.sockets",
		"spec.template.spec.domain.cpu.cores",
		"spec.template.spec.domain.cpu.threads",
		"spec.template.spec.domain.cpu.model",
		"spec.template.spec.domain.resources.requests[cpu]",
		"spec.template.spec.domain.resources.requests[memory]",
		"spec.template.spec.domain.resources.limits[memory]",
		"spec.template.spec.domain.memory.guest",
		"spec.template.spec.nodeSelector",
		"spec.template.spec.schedulerName",
		"spec.template.metadata.annotations[k]",
	}
	got := paths(errs)
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("no conflict at %s; got %v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d conflicts %v, want %d", len(got), got, len(want))
	}
	for _, e := range errs {
		if e.Type != field.ErrorTypeForbidden || !strings.Contains(e.Error(), "u1.small") {
			t.Errorf("conflict %v: want Forbidden naming the instancetype", e)
		}
	}
}

// TestNoConflictWithoutInstancetypeValue: a CPU model or placement the
// instancetype leaves open is the template's to set.
func TestNoConflictWithoutInstancetypeValue(t *testing.T) {
	tmpl := template()
	tmpl.Spec.Domain.CPU = &virtv1.CPU{Model: "host-passthrough"}
	tmpl.Spec.NodeSelector = map[string]string{"zone": "a"}
	tmpl.Spec.SchedulerName = "mine"
	if errs := withInstancetype(u1(4, "8Gi")).Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	if tmpl.Spec.Domain.CPU.Model != "host-passthrough" || tmpl.Spec.NodeSelector["zone"] != "a" || tmpl.Spec.SchedulerName != "mine" {
		t.Errorf("template's own values lost: %+v %v %q", tmpl.Spec.Domain.CPU, tmpl.Spec.NodeSelector, tmpl.Spec.SchedulerName)
	}
}

func TestTopology(t *testing.T) {
	for _, tc := range []struct {
		name       string
		vcpus      uint32
		topology   virtv1.PreferredCPUTopology
		spread     *virtv1.SpreadOptions
		ratio      uint32
		sct        [3]uint32 // sockets, cores, threads
		spreadFail bool
	}{
		{name: "one vCPU is one of each", vcpus: 1, topology: virtv1.PreferCores, sct: [3]uint32{1, 1, 1}},
		{name: "sockets", vcpus: 4, topology: virtv1.PreferSockets, sct: [3]uint32{4, 1, 1}},
		{name: "deprecated preferCores", vcpus: 4, topology: virtv1.DeprecatedPreferCores, sct: [3]uint32{1, 4, 1}},
		{name: "threads", vcpus: 2, topology: virtv1.PreferThreads, sct: [3]uint32{1, 1, 2}},
		{name: "any is sockets", vcpus: 3, topology: virtv1.PreferAny, sct: [3]uint32{3, 1, 1}},
		{name: "spread default 1:2", vcpus: 8, topology: virtv1.PreferSpread, sct: [3]uint32{4, 2, 1}},
		{name: "spread ratio from preferSpreadSocketToCoreRatio", vcpus: 6, topology: virtv1.PreferSpread, ratio: 3, sct: [3]uint32{2, 3, 1}},
		{name: "spread cores threads", vcpus: 4, topology: virtv1.PreferSpread,
			spread: &virtv1.SpreadOptions{Across: ptr.To(virtv1.SpreadAcrossCoresThreads)}, sct: [3]uint32{1, 2, 2}},
		{name: "spread sockets cores threads", vcpus: 8, topology: virtv1.PreferSpread,
			spread: &virtv1.SpreadOptions{Across: ptr.To(virtv1.SpreadAcrossSocketsCoresThreads), Ratio: ptr.To(uint32(2))}, sct: [3]uint32{2, 2, 2}},
		{name: "spread that does not divide is refused", vcpus: 3, topology: virtv1.PreferSpread, spreadFail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := withInstancetype(u1(tc.vcpus, "1Gi"))
			e.Preference = &virtv1.VirtualMachinePreferenceSpec{
				CPU:                           &virtv1.CPUPreferences{PreferredCPUTopology: ptr.To(tc.topology), SpreadOptions: tc.spread},
				PreferSpreadSocketToCoreRatio: tc.ratio,
			}
			e.PreferenceKind, e.PreferenceName = virtv1.ClusterPreferenceKind, "spready"
			tmpl := template()
			errs := e.Apply(field.NewPath("spec"), tmpl)
			if tc.spreadFail {
				if len(errs) != 1 || errs[0].Field != "spec.instancetype.name" {
					t.Fatalf("errs = %v, want one at spec.instancetype.name", errs)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			c := tmpl.Spec.Domain.CPU
			if got := [3]uint32{c.Sockets, c.Cores, c.Threads}; got != tc.sct {
				t.Errorf("sockets, cores, threads = %v, want %v", got, tc.sct)
			}
			if c.Sockets*c.Cores*c.Threads != tc.vcpus {
				t.Errorf("%d vCPUs laid out as %d", tc.vcpus, c.Sockets*c.Cores*c.Threads)
			}
		})
	}
}

// linux is what a Linux preference prefers.
func linux() *virtv1.VirtualMachinePreferenceSpec {
	return &virtv1.VirtualMachinePreferenceSpec{
		Devices: &virtv1.DevicePreferences{
			PreferredDiskBus:                 virtv1.DiskBusSATA,
			PreferredCdromBus:                virtv1.DiskBusSCSI,
			PreferredInterfaceModel:          "e1000",
			PreferredAutoattachSerialConsole: ptr.To(false),
			PreferredRng:                     &virtv1.Rng{},
		},
		Firmware:                               &virtv1.FirmwarePreferences{PreferredUseEfi: ptr.To(true), PreferredUseSecureBoot: ptr.To(false)},
		Machine:                                &virtv1.MachinePreferences{PreferredMachineType: "pc-q35-9.2"},
		PreferredSubdomain:                     ptr.To("guests"),
		PreferredTerminationGracePeriodSeconds: ptr.To(int64(180)),
		Annotations:                            map[string]string{"os": "linux", "keep": "preferred"},
	}
}

// TestPreferenceFillsOnlyEmpty: preferred values land where the template
// says nothing, and nowhere else.
func TestPreferenceFillsOnlyEmpty(t *testing.T) {
	e := &Expansion{Preference: linux(), PreferenceKind: virtv1.ClusterPreferenceKind, PreferenceName: "fedora"}
	tmpl := template()
	tmpl.Spec.Domain.Devices.Disks = append(tmpl.Spec.Domain.Devices.Disks,
		virtv1.Disk{Name: "fast", DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusVirtio}}})
	tmpl.Spec.Domain.Machine = &virtv1.Machine{Type: "q35"}
	tmpl.ObjectMeta.Annotations = map[string]string{"keep": "mine"}
	if errs := e.Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	s := tmpl.Spec
	devices := s.Domain.Devices
	if devices.Disks[0].Disk == nil || devices.Disks[0].Disk.Bus != virtv1.DiskBusSATA {
		t.Errorf("disk without a bus: %+v, want preferred sata", devices.Disks[0].DiskDevice)
	}
	if devices.Disks[1].CDRom.Bus != virtv1.DiskBusSCSI {
		t.Errorf("cdrom bus %q, want preferred scsi", devices.Disks[1].CDRom.Bus)
	}
	if devices.Disks[2].Disk.Bus != virtv1.DiskBusVirtio {
		t.Errorf("the template's virtio became %q", devices.Disks[2].Disk.Bus)
	}
	if len(devices.Interfaces) != 1 || devices.Interfaces[0].Model != "e1000" || devices.Interfaces[0].Masquerade == nil {
		t.Errorf("the default pod NIC should get the preferred model: %+v", devices.Interfaces)
	}
	if devices.AutoattachSerialConsole == nil || *devices.AutoattachSerialConsole || devices.Rng == nil {
		t.Errorf("device preferences: serial %v rng %v", devices.AutoattachSerialConsole, devices.Rng)
	}
	if bl := s.Domain.Firmware.Bootloader; bl == nil || bl.EFI == nil || bl.EFI.SecureBoot == nil || *bl.EFI.SecureBoot {
		t.Errorf("firmware: %+v, want EFI without secure boot", s.Domain.Firmware)
	}
	if s.Domain.Machine.Type != "q35" {
		t.Errorf("the template's machine type became %q", s.Domain.Machine.Type)
	}
	if s.Subdomain != "guests" || *s.TerminationGracePeriodSeconds != 180 {
		t.Errorf("subdomain %q grace %d", s.Subdomain, *s.TerminationGracePeriodSeconds)
	}
	if a := tmpl.ObjectMeta.Annotations; a["os"] != "linux" || a["keep"] != "mine" {
		t.Errorf("annotations %v: preferred ones only where unset", a)
	}
}

func TestPreferenceKeepsChosenBootloader(t *testing.T) {
	e := &Expansion{Preference: &virtv1.VirtualMachinePreferenceSpec{
		Firmware: &virtv1.FirmwarePreferences{PreferredEfi: &virtv1.EFI{SecureBoot: ptr.To(true)}, PreferredUseBiosSerial: ptr.To(true)},
	}}
	tmpl := template()
	tmpl.Spec.Domain.Firmware = &virtv1.Firmware{Bootloader: &virtv1.Bootloader{BIOS: &virtv1.BIOS{}}}
	if errs := e.Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	bl := tmpl.Spec.Domain.Firmware.Bootloader
	if bl.EFI != nil || bl.BIOS.UseSerial == nil || !*bl.BIOS.UseSerial {
		t.Errorf("bootloader %+v: the template's BIOS must stay, with the preferred serial output", bl)
	}
}

func TestPreferenceWithoutAutoattachedNIC(t *testing.T) {
	e := &Expansion{Preference: &virtv1.VirtualMachinePreferenceSpec{Devices: &virtv1.DevicePreferences{
		PreferredAutoattachPodInterface: ptr.To(false), PreferredInterfaceModel: "e1000",
	}}}
	tmpl := template()
	if errs := e.Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(tmpl.Spec.Domain.Devices.Interfaces) != 0 || len(tmpl.Spec.Networks) != 0 {
		t.Errorf("pod network added despite the preferred autoattachPodInterface false: %+v", tmpl.Spec.Networks)
	}
}

func TestRequirements(t *testing.T) {
	needs := &virtv1.VirtualMachinePreferenceSpec{Requirements: &virtv1.PreferenceRequirements{
		CPU:    &virtv1.CPUPreferenceRequirement{Guest: 2},
		Memory: &virtv1.MemoryPreferenceRequirement{Guest: resource.MustParse("2Gi")},
	}}
	t.Run("instancetype too small", func(t *testing.T) {
		e := withInstancetype(u1(1, "1Gi"))
		e.Preference, e.PreferenceKind, e.PreferenceName = needs, virtv1.ClusterPreferenceKind, "windows"
		errs := e.Apply(field.NewPath("spec"), template())
		if got := paths(errs); len(got) != 2 || got[0] != "spec.instancetype.name" || got[1] != "spec.instancetype.name" {
			t.Errorf("errs %v, want both at spec.instancetype.name", errs)
		}
	})
	t.Run("instancetype big enough", func(t *testing.T) {
		e := withInstancetype(u1(2, "2Gi"))
		e.Preference = needs
		if errs := e.Apply(field.NewPath("spec"), template()); len(errs) > 0 {
			t.Error(errs)
		}
	})
	t.Run("template too small", func(t *testing.T) {
		e := &Expansion{Preference: needs, PreferenceKind: virtv1.PreferenceKind, PreferenceName: "windows"}
		tmpl := template()
		tmpl.Spec.Domain.CPU = &virtv1.CPU{Cores: 1}
		tmpl.Spec.Domain.Memory = &virtv1.Memory{Guest: ptr.To(resource.MustParse("512Mi"))}
		got := paths(e.Apply(field.NewPath("spec"), tmpl))
		if len(got) != 2 || got[0] != "spec.template.spec.domain.cpu" || got[1] != "spec.template.spec.domain.memory.guest" {
			t.Errorf("errs at %v", got)
		}
	})
}

// TestExpandVM: the answer of expand-spec is a plain VM, defaulted, with
// the references gone; the VM given stays as it was.
func TestExpandVM(t *testing.T) {
	vm := &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns"},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy:  ptr.To(virtv1.RunStrategyHalted),
			Template:     template(),
			Instancetype: &virtv1.InstancetypeMatcher{Name: "u1.small"},
			Preference:   &virtv1.PreferenceMatcher{Name: "fedora"},
		},
	}
	e := withInstancetype(u1(1, "2Gi"))
	e.Preference = &virtv1.VirtualMachinePreferenceSpec{Devices: &virtv1.DevicePreferences{PreferredDiskBus: virtv1.DiskBusSATA}}
	out, errs := ExpandVM(vm, e)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if out.Spec.Instancetype != nil || out.Spec.Preference != nil {
		t.Error("references kept")
	}
	s := out.Spec.Template.Spec
	if s.Domain.Machine == nil || s.Domain.Machine.Type != virtv1.DefaultMachineType || s.TerminationGracePeriodSeconds == nil {
		t.Errorf("not defaulted: machine %+v grace %v", s.Domain.Machine, s.TerminationGracePeriodSeconds)
	}
	if s.Domain.Devices.Disks[0].Disk.Bus != virtv1.DiskBusSATA || s.Domain.Memory.Guest.String() != "2Gi" {
		t.Errorf("not expanded: %+v %v", s.Domain.Devices.Disks[0], s.Domain.Memory)
	}
	if vm.Spec.Template.Spec.Domain.CPU != nil || vm.Spec.Instancetype == nil {
		t.Error("ExpandVM changed its argument")
	}
}
