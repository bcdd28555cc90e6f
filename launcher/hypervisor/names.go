package hypervisor

import "libvirt.org/go/libvirt"

func stateName(s libvirt.DomainState) string {
	switch s {
	case libvirt.DOMAIN_RUNNING:
		return "running"
	case libvirt.DOMAIN_BLOCKED:
		return "blocked"
	case libvirt.DOMAIN_PAUSED:
		return "paused"
	case libvirt.DOMAIN_SHUTDOWN:
		return "shutdown"
	case libvirt.DOMAIN_SHUTOFF:
		return "shutoff"
	case libvirt.DOMAIN_CRASHED:
		return "crashed"
	case libvirt.DOMAIN_PMSUSPENDED:
		return "pmsuspended"
	}
	return "nostate"
}

// reasons are libvirt's virDomain*Reason enums, by state, in enum order.
var reasons = map[libvirt.DomainState][]string{
	libvirt.DOMAIN_RUNNING: {"unknown", "booted", "migrated", "restored", "from_snapshot", "unpaused",
		"migration_canceled", "save_canceled", "wakeup", "crashed", "postcopy", "postcopy_failed"},
	libvirt.DOMAIN_BLOCKED: {"unknown"},
	libvirt.DOMAIN_PAUSED: {"unknown", "user", "migration", "save", "dump", "ioerror", "watchdog",
		"from_snapshot", "shutting_down", "snapshot", "crashed", "starting_up", "postcopy", "postcopy_failed", "api_error"},
	libvirt.DOMAIN_SHUTDOWN: {"unknown", "user"},
	libvirt.DOMAIN_SHUTOFF: {"unknown", "shutdown", "destroyed", "crashed", "migrated", "saved", "failed",
		"from_snapshot", "daemon"},
	libvirt.DOMAIN_CRASHED:     {"unknown", "panicked"},
	libvirt.DOMAIN_PMSUSPENDED: {"unknown"},
}

func reasonName(s libvirt.DomainState, r int) string {
	if names := reasons[s]; r >= 0 && r < len(names) {
		return names[r]
	}
	return "unknown"
}

func eventTypeName(t libvirt.DomainEventType) string {
	switch t {
	case libvirt.DOMAIN_EVENT_DEFINED:
		return "defined"
	case libvirt.DOMAIN_EVENT_UNDEFINED:
		return "undefined"
	case libvirt.DOMAIN_EVENT_STARTED:
		return "started"
	case libvirt.DOMAIN_EVENT_SUSPENDED:
		return "suspended"
	case libvirt.DOMAIN_EVENT_RESUMED:
		return "resumed"
	case libvirt.DOMAIN_EVENT_STOPPED:
		return "stopped"
	case libvirt.DOMAIN_EVENT_SHUTDOWN:
		return "shutdown"
	case libvirt.DOMAIN_EVENT_PMSUSPENDED:
		return "pmsuspended"
	case libvirt.DOMAIN_EVENT_CRASHED:
		return "crashed"
	}
	return "unknown"
}

// details are libvirt's virDomainEvent*DetailType enums, by event type.
var details = map[libvirt.DomainEventType][]string{
	libvirt.DOMAIN_EVENT_DEFINED:     {"added", "updated", "renamed", "from_snapshot"},
	libvirt.DOMAIN_EVENT_UNDEFINED:   {"removed", "renamed"},
	libvirt.DOMAIN_EVENT_STARTED:     {"booted", "migrated", "restored", "from_snapshot", "wakeup", "recreated"},
	libvirt.DOMAIN_EVENT_SUSPENDED:   {"paused", "migrated", "ioerror", "watchdog", "restored", "from_snapshot", "api_error", "postcopy", "postcopy_failed"},
	libvirt.DOMAIN_EVENT_RESUMED:     {"unpaused", "migrated", "from_snapshot", "postcopy", "postcopy_failed"},
	libvirt.DOMAIN_EVENT_STOPPED:     {"shutdown", "destroyed", "crashed", "migrated", "saved", "failed", "from_snapshot"},
	libvirt.DOMAIN_EVENT_SHUTDOWN:    {"finished", "guest", "host"},
	libvirt.DOMAIN_EVENT_PMSUSPENDED: {"memory", "disk"},
	libvirt.DOMAIN_EVENT_CRASHED:     {"panicked", "crashloaded"},
}

func eventDetailName(e *libvirt.DomainEventLifecycle) string {
	if names := details[e.Event]; e.Detail >= 0 && e.Detail < len(names) {
		return names[e.Detail]
	}
	return "unknown"
}
