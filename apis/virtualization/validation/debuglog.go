package validation

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// maxLibvirtLogFilters bounds the annotation's value: libvirt keeps every
// filter and tests each log message against all of them.
const maxLibvirtLogFilters = 64

// libvirtLogFilter is one of libvirt's log filters: a priority (1 debug,
// 2 info, 3 warning, 4 error), an optional "+" (log with a stack trace) and
// the name of a log source (qemu.qemu_monitor, util.json) or "*".
var libvirtLogFilter = regexp.MustCompile(`^[1-4]:\+?([A-Za-z0-9_][A-Za-z0-9_.]*|\*)$`)

// ValidateLibvirtLogFilters checks the value of LibvirtLogFiltersAnnotation:
// space-separated libvirt log filters and nothing else. The value reaches
// the launcher pod, whose user set it; whatever it contains must mean
// filters and only filters (KubeVirt once wrote it into a configuration
// file, where a quote and a newline in it added settings of the user's).
func ValidateLibvirtLogFilters(value string) error {
	filters := strings.Fields(value)
	switch {
	case len(filters) == 0:
		return fmt.Errorf("no filter: give libvirt log filters such as \"1:qemu.qemu_monitor 3:*\", or remove the annotation")
	case len(filters) > maxLibvirtLogFilters:
		return fmt.Errorf("%d filters, at most %d", len(filters), maxLibvirtLogFilters)
	}
	for _, f := range filters {
		if !libvirtLogFilter.MatchString(f) {
			return fmt.Errorf("%q is not a libvirt log filter: LEVEL:SOURCE with LEVEL 1 (debug) to 4 (error) and SOURCE a log source such as qemu.qemu_monitor or *", f)
		}
	}
	if strings.Join(filters, " ") != value {
		return fmt.Errorf("filters are separated by single spaces, without leading or trailing space")
	}
	return nil
}

// validateDebugAnnotations checks the annotations of a VMI or of a VM's
// template that configure the launcher's debug output.
func validateDebugAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	v, ok := annotations[virtv1.LibvirtLogFiltersAnnotation]
	if !ok {
		return nil
	}
	if err := ValidateLibvirtLogFilters(v); err != nil {
		return field.ErrorList{field.Invalid(fldPath.Key(virtv1.LibvirtLogFiltersAnnotation), v, err.Error())}
	}
	return nil
}
