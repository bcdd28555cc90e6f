package domain

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// setDisks attaches every spec disk to the file of its volume.
func setDisks(d *libvirtxml.Domain, vmi *virtv1.VirtualMachineInstance, host Host) error {
	volumes := map[string]*virtv1.Volume{}
	for i := range vmi.Spec.Volumes {
		volumes[vmi.Spec.Volumes[i].Name] = &vmi.Spec.Volumes[i]
	}
	// Target names are per prefix: virtio disks are vd*, the others sd*.
	next := map[string]int{}
	scsi := false
	threads := newIOThreads(&vmi.Spec.Domain)
	for _, disk := range vmi.Spec.Domain.Devices.Disks {
		if _, ok := volumes[disk.Name]; !ok {
			return fmt.Errorf("disk %q: no volume of that name", disk.Name)
		}
		file, ok := host.Disks[disk.Name]
		if !ok || file.Path == "" {
			return fmt.Errorf("disk %q: no file prepared for its volume", disk.Name)
		}
		format := file.Format
		if format == "" {
			format = FormatRaw
		}
		source := &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: file.Path}}
		if file.Block {
			source = &libvirtxml.DomainDiskSource{Block: &libvirtxml.DomainDiskSourceBlock{Dev: file.Path}}
		}
		dd := libvirtxml.DomainDisk{
			Device: "disk",
			Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: format},
			Source: source,
			Serial: disk.Serial,
			Alias:  &libvirtxml.DomainAlias{Name: AliasPrefix + disk.Name},
		}
		if err := setDiskOptions(&dd, &disk); err != nil {
			return err
		}
		var bus virtv1.DiskBus
		tray := ""
		switch {
		case disk.CDRom != nil && disk.Disk != nil:
			return fmt.Errorf("disk %q: disk and cdrom are exclusive", disk.Name)
		case disk.CDRom != nil:
			// readonly: false changes nothing: libvirt gives a CD-ROM a
			// read-only medium whatever the domain says, and KubeVirt
			// accepts the field so; the API warns of it.
			dd.Device = "cdrom"
			dd.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
			tray = string(disk.CDRom.Tray)
			bus = disk.CDRom.Bus
			if bus == virtv1.DiskBusVirtio {
				return fmt.Errorf("disk %q: a cdrom cannot be on the virtio bus", disk.Name)
			}
		case disk.Disk != nil:
			bus = disk.Disk.Bus
			if disk.Disk.ReadOnly {
				dd.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
			}
		default:
			return fmt.Errorf("disk %q: neither disk nor cdrom", disk.Name)
		}
		prefix := "sd"
		switch bus {
		case virtv1.DiskBusVirtio:
			prefix = "vd"
			if err := setVirtioDiskOptions(d, &dd, &disk, vmi.Spec.Domain, threads); err != nil {
				return err
			}
		case virtv1.DiskBusSCSI:
			scsi = true
		case virtv1.DiskBusSATA, virtv1.DiskBusUSB:
		default:
			return fmt.Errorf("disk %q: unknown bus %q", disk.Name, bus)
		}
		dd.Target = &libvirtxml.DomainDiskTarget{Dev: prefix + driveLetters(next[prefix]), Bus: string(bus), Tray: tray}
		next[prefix]++
		if file.ReadOnly {
			dd.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
		}
		if disk.BootOrder != nil {
			dd.Boot = &libvirtxml.DomainDeviceBoot{Order: uint(*disk.BootOrder)}
		}
		d.Devices.Disks = append(d.Devices.Disks, dd)
	}
	if scsi {
		d.Devices.Controllers = append(d.Devices.Controllers, libvirtxml.DomainController{
			Type: "scsi", Index: new(uint), Model: "virtio-scsi",
		})
	}
	d.IOThreads = threads.count
	return nil
}

// driveLetters names the i-th drive as Linux does: a..z, aa..az, ...
func driveLetters(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('a'+(i-1)%26)) + s
	}
	return s
}

// setInterfaces attaches every spec interface to the tap virt-handler's
// network binding prepared for it in the pod (host.Interfaces): an
// unmanaged ethernet interface, so that libvirt opens the existing tap and
// changes nothing in the pod's network, which this unprivileged process may
// not touch. The binding (masquerade or bridge) decided everything else.
func setInterfaces(d *libvirtxml.Domain, vmi *virtv1.VirtualMachineInstance, host Host) error {
	networks := map[string]*virtv1.Network{}
	for i := range vmi.Spec.Networks {
		networks[vmi.Spec.Networks[i].Name] = &vmi.Spec.Networks[i]
	}
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		network, ok := networks[iface.Name]
		if !ok {
			return fmt.Errorf("interface %q: no network of that name", iface.Name)
		}
		if network.Pod == nil {
			return fmt.Errorf("interface %q: network %q is not the pod network", iface.Name, network.Name)
		}
		if iface.Bridge == nil && iface.Masquerade == nil {
			return fmt.Errorf("interface %q: no binding method", iface.Name)
		}
		if iface.Model == "" {
			return fmt.Errorf("interface %q: no model", iface.Name)
		}
		nic, ok := host.Interfaces[iface.Name]
		if !ok || nic.Tap == "" {
			return fmt.Errorf("interface %q: no tap prepared in the pod for it", iface.Name)
		}
		mac := nic.MAC
		if mac == "" {
			mac = iface.MacAddress
		}
		if mac == "" {
			return fmt.Errorf("interface %q: no MAC address", iface.Name)
		}
		model := iface.Model
		if model == "virtio" {
			model = virtioModel(&vmi.Spec.Domain.Devices)
		}
		di := libvirtxml.DomainInterface{
			Source: &libvirtxml.DomainInterfaceSource{Ethernet: &libvirtxml.DomainInterfaceSourceEthernet{}},
			Target: &libvirtxml.DomainInterfaceTarget{Dev: nic.Tap, Managed: "no"},
			MAC:    &libvirtxml.DomainInterfaceMAC{Address: mac},
			Model:  &libvirtxml.DomainInterfaceModel{Type: model},
			Alias:  &libvirtxml.DomainAlias{Name: AliasPrefix + iface.Name},
		}
		if iface.ACPIIndex > 0 {
			di.ACPI = &libvirtxml.DomainDeviceACPI{Index: uint(iface.ACPIIndex)}
		}
		switch iface.State {
		case "", virtv1.InterfaceStateLinkUp:
		case virtv1.InterfaceStateLinkDown:
			di.Link = &libvirtxml.DomainInterfaceLink{State: "down"}
		default:
			return fmt.Errorf("interface %q: state %q is not supported", iface.Name, iface.State)
		}
		if nic.MTU > 0 {
			di.MTU = &libvirtxml.DomainInterfaceMTU{Size: nic.MTU}
		}
		if iface.BootOrder != nil {
			di.Boot = &libvirtxml.DomainDeviceBoot{Order: uint(*iface.BootOrder)}
		}
		if q := nicQueues(vmi, d); q > 1 && strings.HasPrefix(model, "virtio") {
			// No driver name: libvirt takes vhost where the launcher
			// may open /dev/vhost-net (KVM), QEMU's own virtio-net
			// otherwise (TCG); both take the tap's queues.
			di.Driver = &libvirtxml.DomainInterfaceDriver{Queues: uint(q)}
		}
		d.Devices.Interfaces = append(d.Devices.Interfaces, di)
	}
	return nil
}

// setSerial adds the serial console: a unix socket a console client can
// attach to at any time, with everything the guest writes also appended to a
// log file that outlives both.
func setSerial(d *libvirtxml.Domain, spec *virtv1.DomainSpec, host Host) error {
	if a := spec.Devices.AutoattachSerialConsole; a != nil && !*a {
		return nil
	}
	if host.SerialSocket == "" {
		return fmt.Errorf("serial console: no socket path on the host")
	}
	s := libvirtxml.DomainSerial{
		Source: &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{Mode: "bind", Path: host.SerialSocket}},
		Target: &libvirtxml.DomainSerialTarget{Port: new(uint)},
		Alias:  &libvirtxml.DomainAlias{Name: AliasPrefix + "serial0"},
	}
	if log := spec.Devices.LogSerialConsole; host.SerialLog != "" && (log == nil || *log) {
		s.Log = &libvirtxml.DomainChardevLog{File: host.SerialLog, Append: "on"}
	}
	d.Devices.Serials = append(d.Devices.Serials, s)
	return nil
}

// setGraphics adds a VGA card and QEMU's VNC server showing it, listening on
// a unix socket only: the node proxies VNC clients to it, nothing in the pod
// network can reach it.
func setGraphics(d *libvirtxml.Domain, spec *virtv1.DomainSpec, host Host) error {
	if a := spec.Devices.AutoattachGraphicsDevice; a != nil && !*a {
		return nil
	}
	if host.VNCSocket == "" {
		return fmt.Errorf("graphics device: no VNC socket path on the host")
	}
	d.Devices.Graphics = append(d.Devices.Graphics, libvirtxml.DomainGraphic{VNC: &libvirtxml.DomainGraphicVNC{
		Listeners: []libvirtxml.DomainGraphicListener{{Socket: &libvirtxml.DomainGraphicListenerSocket{Socket: host.VNCSocket}}},
	}})
	// Plain VGA, as KubeVirt attaches on x86: SeaBIOS, OVMF and any guest
	// kernel (vgacon) drive it without a special driver, also under TCG.
	// 16 MiB of VRAM as KubeVirt sizes it.
	// A spec's video type replaces it (bochs or virtio for EFI guests, say).
	model := libvirtxml.DomainVideoModel{Type: "vga", Heads: 1, VRam: 16384}
	if v := spec.Devices.Video; v != nil && v.Type != "" && v.Type != "vga" {
		model = libvirtxml.DomainVideoModel{Type: v.Type, Heads: 1}
		switch v.Type {
		case "bochs", "cirrus":
			model.VRam = 16384
		case "virtio", "ramfb":
		default:
			return fmt.Errorf("video: unknown type %q", v.Type)
		}
	}
	d.Devices.Videos = append(d.Devices.Videos, libvirtxml.DomainVideo{Model: model})
	return nil
}

func setRNG(d *libvirtxml.Domain, dev *virtv1.Devices) {
	if dev.Rng == nil {
		return
	}
	d.Devices.RNGs = append(d.Devices.RNGs, libvirtxml.DomainRNG{
		Model:   virtioModel(dev),
		Backend: &libvirtxml.DomainRNGBackend{Random: &libvirtxml.DomainRNGBackendRandom{Device: "/dev/urandom"}},
	})
}

func setWatchdog(d *libvirtxml.Domain, w *virtv1.Watchdog) error {
	if w == nil {
		return nil
	}
	if w.I6300ESB == nil {
		return fmt.Errorf("watchdog %q: no model", w.Name)
	}
	action := w.I6300ESB.Action
	switch action {
	case virtv1.WatchdogActionReset, virtv1.WatchdogActionPoweroff, virtv1.WatchdogActionShutdown:
	default:
		return fmt.Errorf("watchdog %q: unknown action %q", w.Name, action)
	}
	d.Devices.Watchdogs = append(d.Devices.Watchdogs, libvirtxml.DomainWatchdog{
		Model: "i6300esb", Action: string(action), Alias: &libvirtxml.DomainAlias{Name: AliasPrefix + w.Name},
	})
	return nil
}

// nicQueues is the queues of each virtio NIC of vmi (layout.NICQueues),
// from d's vCPUs.
func nicQueues(vmi *virtv1.VirtualMachineInstance, d *libvirtxml.Domain) uint32 {
	mq := vmi.Spec.Domain.Devices.NetworkInterfaceMultiQueue
	if mq == nil || !*mq || d.VCPU == nil {
		return 1
	}
	return layout.NICQueues(true, uint32(d.VCPU.Value))
}
