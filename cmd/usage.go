package cmd

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagGroup is a titled set of a command's flags in its help.
type flagGroup struct {
	Title, Usages string
}

// groupTitles names the groups of flags that set a section of the
// configuration; a flag of any other section, or of none, is in "Flags".
var groupTitles = map[string]string{
	"prometheus":  "Prometheus source flags",
	"scrape":      "Scrape source flags",
	"sim":         "Simulator flags",
	"slurm":       "Slurm flags",
	"pricing":     "Pricing flags",
	"scaling":     "Scaling what-if flags",
	"migration":   "Migration plan flags",
	"attribution": "Attribution flags",
}

// groupOrder is the order the groups are printed in, after "Flags".
var groupOrder = []string{"attribution", "pricing", "scaling", "migration", "prometheus", "scrape", "sim", "slurm"}

// flagGroups groups a command's own flags by the section of the setting
// each one sets, for the help: a command with forty flags reads better in
// sections.
func flagGroups(c *cobra.Command) []flagGroup {
	sets := map[string]*pflag.FlagSet{}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		section := ""
		if keys := f.Annotations[keyAnnotation]; len(keys) > 0 {
			section, _, _ = strings.Cut(keys[0], ".")
		}
		if groupTitles[section] == "" {
			section = ""
		}
		if sets[section] == nil {
			sets[section] = pflag.NewFlagSet(section, pflag.ContinueOnError)
		}
		sets[section].AddFlag(f)
	})
	var out []flagGroup
	for _, section := range append([]string{""}, groupOrder...) {
		if fs := sets[section]; fs != nil {
			title := groupTitles[section]
			if title == "" {
				title = "Flags"
			}
			out = append(out, flagGroup{title, strings.TrimRight(fs.FlagUsages(), " \n")})
		}
	}
	return out
}

// usageTemplate is cobra's, with the command's flags in groups.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}{{range flagGroups .}}

{{.Title}}:
{{.Usages}}{{end}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasHelpSubCommands}}

Additional help topics:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

func init() { cobra.AddTemplateFunc("flagGroups", flagGroups) }
