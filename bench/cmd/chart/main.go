// Command chart reads a benchstat report in CSV (benchstat -col /impl -format csv) and writes
// an SVG bar chart of the medians, levee against its peers per benchmark; with -readme it also
// rewrites the marked sections of bench/README.md: the machine line, the tables of medians and
// the goals checked against them.
//
//	chart -in results/benchstat.csv -svg chart.svg -readme README.md -machine results/machine.txt
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
)

func main() {
	in := flag.String("in", "results/benchstat.csv", "benchstat CSV report to read")
	svg := flag.String("svg", "chart.svg", "SVG chart to write")
	readme := flag.String("readme", "", "README whose machine, medians and goals sections to rewrite (none when empty)")
	machine := flag.String("machine", "results/machine.txt", "the machine line for the README")
	title := flag.String("title", "levee vs peers: median time per operation (log scale; lower is better)", "chart title")
	flag.Parse()
	if err := run(*in, *svg, *readme, *machine, *title); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(in, svgPath, readme, machine, title string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	t, err := ParseCSV(f)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, t, "sec/op", title); err != nil {
		return err
	}
	if err := os.WriteFile(svgPath, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if readme == "" {
		return nil
	}
	m, err := os.ReadFile(machine)
	if err != nil {
		return err
	}
	var medians, goals bytes.Buffer
	WriteMedians(&medians, t)
	WriteGoals(&goals, Goals(t))
	return Splice(readme, map[string]string{
		"machine": "```\n" + string(bytes.TrimSpace(m)) + "\n```",
		"medians": medians.String(),
		"goals":   goals.String(),
	})
}
