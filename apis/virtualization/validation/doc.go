// Package validation checks VirtualMachineInstances and VirtualMachines of
// the internal API and says what is wrong with them as field.ErrorList, so
// that the API server answers 422 with the path of each offending field and
// a sentence a person understands. It also produces warnings for settings that
// are legal but deprecated or risky.
//
// Validation runs on defaulted objects: a field the defaults always set (the
// machine type, the CPU topology) is reported as required if still missing.
// It must not import the apiserver or any client.
package validation
