package validation

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strings"

	apipath "k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// MaxCloudInitDataBytes bounds user and network data so a VMI stays far
// below etcd's object size limit.
const MaxCloudInitDataBytes = 256 * 1024

var (
	diskBuses  = []virtualization.DiskBus{virtualization.DiskBusVirtio, virtualization.DiskBusSATA, virtualization.DiskBusSCSI, virtualization.DiskBusUSB}
	cdromBuses = []virtualization.DiskBus{virtualization.DiskBusSATA, virtualization.DiskBusSCSI, virtualization.DiskBusUSB}
	// igb needs QEMU 8: a node capability (internal/capability), checked
	// against the nodes' reports, not here.
	nicModels = []string{"virtio", "e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139"}
)

// validateVolumes checks each volume and returns the names of the valid ones,
// so disks can be checked against them.
func validateVolumes(volumes []virtualization.Volume, fldPath *field.Path) (sets.Set[string], field.ErrorList) {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, v := range volumes {
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateVolumeName(v.Name, p.Child("name"))...)
		if names.Has(v.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), v.Name))
		}
		names.Insert(v.Name)
		allErrs = append(allErrs, validateVolumeSource(&v.VolumeSource, p)...)
	}
	return names, allErrs
}

func validateVolumeSource(src *virtualization.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	set := 0
	if cd := src.ContainerDisk; cd != nil {
		set++
		p := fldPath.Child("containerDisk")
		if cd.Image == "" {
			allErrs = append(allErrs, field.Required(p.Child("image"), "the image holding the disk"))
		}
		allErrs = append(allErrs, validateImagePath(cd.Path, p.Child("path"))...)
		allErrs = append(allErrs, validatePullPolicy(cd.ImagePullPolicy, p.Child("imagePullPolicy"))...)
	}
	if ed := src.EmptyDisk; ed != nil {
		set++
		if ed.Capacity.Sign() <= 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("emptyDisk", "capacity"), ed.Capacity.String(), "must be greater than zero"))
		}
	}
	if ci := src.CloudInitNoCloud; ci != nil {
		set++
		allErrs = append(allErrs, validateCloudInit(ci, fldPath.Child("cloudInitNoCloud"))...)
	}
	if pvc := src.PersistentVolumeClaim; pvc != nil {
		set++
		// Kubernetes takes any claim name a URL path can carry in a pod,
		// and so does KubeVirt: one no claim can have is a warning
		// (warning.go), the guest then lacks it like any missing claim.
		for _, msg := range apipath.IsValidPathSegmentName(pvc.ClaimName) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("persistentVolumeClaim", "claimName"), pvc.ClaimName, msg))
		}
		if pvc.ClaimName == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("persistentVolumeClaim", "claimName"), "the name of a claim in the VMI's namespace"))
		}
	}
	if ci := src.CloudInitConfigDrive; ci != nil {
		set++
		allErrs = append(allErrs, validateCloudInit((*virtualization.CloudInitNoCloudSource)(ci), fldPath.Child("cloudInitConfigDrive"))...)
	}
	for _, given := range []bool{src.Sysprep != nil, src.ConfigMap != nil, src.Secret != nil, src.DownwardAPI != nil, src.ServiceAccount != nil} {
		if given {
			set++
		}
	}
	allErrs = append(allErrs, validateConfigVolume(src, fldPath)...)
	// The sources this platform refuses (unsupported.go, notimplemented.go)
	// still count: a volume has one source, whichever.
	for _, given := range []bool{src.HostDisk != nil, src.Ephemeral != nil,
		src.DataVolume != nil, src.DownwardMetrics != nil, src.MemoryDump != nil, src.ContainerPath != nil} {
		if given {
			set++
		}
	}
	switch {
	case set == 0:
		allErrs = append(allErrs, field.Required(fldPath, "a volume needs a source: containerDisk, emptyDisk, cloudInitNoCloud or persistentVolumeClaim"))
	case set > 1:
		allErrs = append(allErrs, field.Forbidden(fldPath, "a volume may have only one source"))
	}
	return allErrs
}

func validateCloudInit(ci *virtualization.CloudInitNoCloudSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	check := func(kind string, plain, b64 string, secret bool, plainField, b64Field, secretField string) {
		n := 0
		for _, given := range []bool{plain != "", b64 != "", secret} {
			if given {
				n++
			}
		}
		if n > 1 {
			allErrs = append(allErrs, field.Forbidden(fldPath, fmt.Sprintf("give %s only once: %s, %s or %s", kind, plainField, b64Field, secretField)))
		}
		if len(plain) > MaxCloudInitDataBytes {
			allErrs = append(allErrs, field.TooLong(fldPath.Child(plainField), "", MaxCloudInitDataBytes))
		}
		if b64 != "" {
			decoded, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				allErrs = append(allErrs, field.Invalid(fldPath.Child(b64Field), "<base64>", "is not valid base64: "+err.Error()))
			} else if len(decoded) > MaxCloudInitDataBytes {
				allErrs = append(allErrs, field.TooLong(fldPath.Child(b64Field), "", MaxCloudInitDataBytes))
			}
		}
	}
	check("user data", ci.UserData, ci.UserDataBase64, ci.SecretRef != nil, "userData", "userDataBase64", "secretRef")
	check("network data", ci.NetworkData, ci.NetworkDataBase64, ci.NetworkDataSecretRef != nil, "networkData", "networkDataBase64", "networkDataSecretRef")
	if ci.UserData == "" && ci.UserDataBase64 == "" && ci.SecretRef == nil &&
		ci.NetworkData == "" && ci.NetworkDataBase64 == "" && ci.NetworkDataSecretRef == nil {
		allErrs = append(allErrs, field.Required(fldPath, "cloud-init needs user data or network data"))
	}
	if ci.SecretRef != nil {
		allErrs = append(allErrs, validateDNSSubdomain(ci.SecretRef.Name, fldPath.Child("secretRef", "name"))...)
	}
	if ci.NetworkDataSecretRef != nil {
		allErrs = append(allErrs, validateDNSSubdomain(ci.NetworkDataSecretRef.Name, fldPath.Child("networkDataSecretRef", "name"))...)
	}
	return allErrs
}

func validateNetworks(networks []virtualization.Network, fldPath *field.Path) (sets.Set[string], field.ErrorList) {
	var allErrs field.ErrorList
	names := sets.New[string]()
	podNetworks := 0
	for i, n := range networks {
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateName(n.Name, p.Child("name"))...)
		if names.Has(n.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), n.Name))
		}
		names.Insert(n.Name)
		if n.Pod == nil {
			if n.Multus == nil && n.ResourceClaim == nil {
				allErrs = append(allErrs, field.Required(p.Child("pod"), "a network needs a source; the only one is pod"))
			}
			continue
		}
		podNetworks++
		if podNetworks > 1 {
			allErrs = append(allErrs, field.Forbidden(p.Child("pod"), "a guest can be on the pod network only once"))
		}
		if cidr := n.Pod.VMNetworkCIDR; cidr != "" {
			prefix, err := netip.ParsePrefix(cidr)
			switch {
			case err != nil || !prefix.Addr().Is4():
				allErrs = append(allErrs, field.Invalid(p.Child("pod", "vmNetworkCIDR"), cidr, "must be an IPv4 CIDR such as 198.19.255.0/24"))
			case prefix.Bits() > 30:
				allErrs = append(allErrs, field.Invalid(p.Child("pod", "vmNetworkCIDR"), cidr, "must be /30 or larger: it holds the gateway (first address) and the guest (second)"))
			}
		}
	}
	return names, allErrs
}

func validateDisks(disks []virtualization.Disk, volumes sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, d := range disks {
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateVolumeName(d.Name, p.Child("name"))...)
		if names.Has(d.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), d.Name))
		}
		names.Insert(d.Name)
		if d.Name != "" && !volumes.Has(d.Name) {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), d.Name, "no volume has this name: add one to spec.volumes"))
		}
		switch {
		case d.LUN != nil:
			// Refused in unsupported.go.
		case d.Disk != nil && d.CDRom != nil:
			allErrs = append(allErrs, field.Forbidden(p, "a disk is either a disk or a cdrom, not both"))
		case d.Disk != nil:
			allErrs = append(allErrs, validateBus(d.Disk.Bus, diskBuses, p.Child("disk", "bus"))...)
		case d.CDRom != nil:
			// readonly: false is accepted as KubeVirt accepts it; libvirt
			// gives a guest's CD-ROM a read-only medium either way
			// (warning.go says so).
			allErrs = append(allErrs, validateBus(d.CDRom.Bus, cdromBuses, p.Child("cdrom", "bus"))...)
		default:
			allErrs = append(allErrs, field.Required(p.Child("disk"), "a device type is required: disk or cdrom"))
		}
	}
	return allErrs
}

// volumeNameRegexp is what a volume's (and its disk's) name may be. KubeVirt
// does not restrict it; here it becomes a directory name in the launcher
// pod and the disk's libvirt alias, ua-<name>, which libvirt's domain XML
// allows [a-zA-Z0-9_-] only (formatdomain, "alias"): so a DNS label, and
// also the underscores and capitals KubeVirt's users write
// (vmi-shared_disk), but no dot, and so no "." or ".." as a path element
// either. Where it would be part of a container's name (containerDisk) and
// is no DNS label, the launcher pod numbers the container instead.
var volumeNameRegexp = regexp.MustCompile(`^[-_A-Za-z0-9]+$`)

// validateVolumeName is validateName for volumes and disks.
func validateVolumeName(name string, fldPath *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(fldPath, "a name is required")}
	case len(name) > validation.DNS1123LabelMaxLength:
		return field.ErrorList{field.TooLong(fldPath, name, validation.DNS1123LabelMaxLength)}
	case !volumeNameRegexp.MatchString(name):
		return field.ErrorList{field.Invalid(fldPath, name, "must consist of letters, digits, '-' and '_' only: "+
			"it names the disk's libvirt alias, which takes no other characters, and its file in the launcher pod")}
	}
	return nil
}

func validateBus(bus virtualization.DiskBus, supported []virtualization.DiskBus, fldPath *field.Path) field.ErrorList {
	if slices.Contains(supported, bus) {
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, bus, supported)}
}

func validateInterfaces(ifaces []virtualization.Interface, networks sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	macs := sets.New[string]()
	for i, iface := range ifaces {
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateName(iface.Name, p.Child("name"))...)
		if names.Has(iface.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), iface.Name))
		}
		names.Insert(iface.Name)
		if iface.Name != "" && !networks.Has(iface.Name) {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), iface.Name, "no network has this name: add one to spec.networks"))
		}
		bindings := 0
		for _, given := range []bool{iface.Bridge != nil, iface.Masquerade != nil, iface.DeprecatedSlirp != nil, iface.SRIOV != nil,
			iface.DeprecatedMacvtap != nil, iface.DeprecatedPasst != nil, iface.PasstBinding != nil, iface.Binding != nil} {
			if given {
				bindings++
			}
		}
		switch {
		case bindings > 1:
			allErrs = append(allErrs, field.Forbidden(p, "an interface has one binding: bridge or masquerade, not both"))
		case bindings == 0:
			allErrs = append(allErrs, field.Required(p.Child("masquerade"), "a binding is required: masquerade: {}"))
		}
		if !slices.Contains(nicModels, iface.Model) {
			allErrs = append(allErrs, field.NotSupported(p.Child("model"), iface.Model, nicModels))
		}
		if iface.MacAddress != "" {
			mac, err := net.ParseMAC(iface.MacAddress)
			switch {
			case err != nil || len(mac) != 6:
				allErrs = append(allErrs, field.Invalid(p.Child("macAddress"), iface.MacAddress, "must be a 48-bit MAC address such as de:ad:00:00:be:af"))
			case mac[0]&1 == 1:
				allErrs = append(allErrs, field.Invalid(p.Child("macAddress"), iface.MacAddress, "must be a unicast address (the lowest bit of the first byte clear)"))
			case macs.Has(mac.String()):
				allErrs = append(allErrs, field.Duplicate(p.Child("macAddress"), iface.MacAddress))
			default:
				macs.Insert(mac.String())
			}
		}
		allErrs = append(allErrs, validatePorts(iface, p.Child("ports"))...)
	}
	return allErrs
}

func validatePorts(iface virtualization.Interface, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(iface.Ports) > 0 && iface.Masquerade == nil {
		allErrs = append(allErrs, field.Forbidden(fldPath, "ports are forwarded only by the masquerade binding"))
	}
	names := sets.New[string]()
	forwarded := sets.New[virtualization.Port]()
	for i, port := range iface.Ports {
		p := fldPath.Index(i)
		if key := (virtualization.Port{Protocol: port.Protocol, Port: port.Port}); forwarded.Has(key) {
			allErrs = append(allErrs, field.Duplicate(p, fmt.Sprintf("%s/%d", port.Protocol, port.Port)))
		} else {
			forwarded.Insert(key)
		}
		if port.Port < 1 || port.Port > 65535 {
			allErrs = append(allErrs, field.Invalid(p.Child("port"), port.Port, "must be between 1 and 65535"))
		}
		if port.Protocol != "TCP" && port.Protocol != "UDP" {
			allErrs = append(allErrs, field.NotSupported(p.Child("protocol"), port.Protocol, []string{"TCP", "UDP"}))
		}
		if port.Name != "" {
			allErrs = append(allErrs, validateDNSLabel(port.Name, p.Child("name"))...)
			if names.Has(port.Name) {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
	}
	return allErrs
}

// validateAttachments refuses volumes and networks nothing attaches: they
// would be prepared and never reach the guest, which is always a mistake.
func validateAttachments(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	disks := sets.New[string]()
	for _, d := range spec.Domain.Devices.Disks {
		disks.Insert(d.Name)
	}
	for _, fs := range spec.Domain.Devices.Filesystems {
		disks.Insert(fs.Name)
	}
	for i, v := range spec.Volumes {
		if v.Name != "" && !disks.Has(v.Name) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("volumes").Index(i).Child("name"), v.Name,
				"no disk attaches this volume: add a disk of the same name to spec.domain.devices.disks"))
		}
	}
	ifaces := sets.New[string]()
	for _, iface := range spec.Domain.Devices.Interfaces {
		ifaces.Insert(iface.Name)
	}
	for i, n := range spec.Networks {
		if n.Name != "" && !ifaces.Has(n.Name) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("networks").Index(i).Child("name"), n.Name,
				"no interface attaches this network: add an interface of the same name to spec.domain.devices.interfaces"))
		}
	}
	return allErrs
}

// validateBootOrder checks that boot positions are unique across disks and
// interfaces: the firmware boots from one device per position.
func validateBootOrder(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[uint32]string{}
	check := func(order *uint32, p *field.Path, name string) {
		if order == nil {
			return
		}
		if *order < 1 {
			allErrs = append(allErrs, field.Invalid(p, *order, "must be 1 or more"))
			return
		}
		if other, ok := seen[*order]; ok {
			allErrs = append(allErrs, field.Invalid(p, *order, fmt.Sprintf("boot order %d is already used by %s", *order, other)))
			return
		}
		seen[*order] = name
	}
	for i, d := range spec.Domain.Devices.Disks {
		check(d.BootOrder, fldPath.Child("disks").Index(i).Child("bootOrder"), "disk "+d.Name)
	}
	for i, iface := range spec.Domain.Devices.Interfaces {
		check(iface.BootOrder, fldPath.Child("interfaces").Index(i).Child("bootOrder"), "interface "+iface.Name)
	}
	return allErrs
}

// validateImagePath checks a path inside a container image.
func validateImagePath(p string, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return nil
	}
	if !path.IsAbs(p) {
		return field.ErrorList{field.Invalid(fldPath, p, "must be an absolute path inside the image")}
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return field.ErrorList{field.Invalid(fldPath, p, "must not contain '..'")}
		}
	}
	return nil
}
