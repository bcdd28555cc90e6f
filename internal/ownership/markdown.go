package ownership

import (
	"fmt"
	"slices"
	"strings"
)

// Markdown renders the tables as docs/ownership.md shows them between its
// markers; a test keeps the two equal.
func Markdown() string {
	var b strings.Builder
	b.WriteString("VMI status (`virtualmachineinstances/status`):\n\n")
	b.WriteString("| writer | writes when | moves the phase to | fields | only in the write that ends the VMI |\n|---|---|---|---|---|\n")
	for _, r := range VMI {
		phases := "—"
		if len(r.Phases) > 0 {
			var ps []string
			for _, p := range r.Phases {
				ps = append(ps, string(p))
			}
			phases = strings.Join(ps, ", ")
			if r.Reason != "" {
				phases += " (reason " + r.Reason + " only)"
			}
			phases += "; with it " + code(phaseFields)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Writer, r.Stage, phases, code(r.Fields), code(r.Ending))
	}
	fmt.Fprintf(&b, "\n%s changes `%s` only to its own node, in the write that sets `migrationState.completed` (the switch-over); "+
		"%s writes any field of `migrationState` in the write that starts a new migration (a new `migrationState.migrationUid`).\n",
		MigrationTarget, switchOverField, MigrationController)
	b.WriteString("\nMigration status (`virtualmachineinstancemigrations/status`): " + string(MigrationController) + " only.\n")
	b.WriteString("\nVM status (`virtualmachines/status`):\n\n| writer | fields |\n|---|---|\n")
	for _, r := range VM {
		fmt.Fprintf(&b, "| %s | %s |\n", r.Writer, code(r.Fields))
	}
	b.WriteString("\nSpec and metadata (the main resource):\n\n| resource | writer | fields |\n|---|---|---|\n")
	for _, r := range Object {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Resource, r.Writer, code(r.Fields))
	}
	return b.String()
}

// code is fields as a list of code spans, — for none.
func code(fields []string) string {
	if len(fields) == 0 {
		return "—"
	}
	fs := slices.Clone(fields)
	for i := range fs {
		fs[i] = "`" + fs[i] + "`"
	}
	return strings.Join(fs, ", ")
}
