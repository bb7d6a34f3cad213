package leveeconfig

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The keys of Resilience4j's Spring Boot starter outside configs and instances that switch
// Spring or Java machinery: each section's metrics.enabled and metrics.legacy.enabled
// (Micrometer's auto-configuration), and resilience4j.scheduled.executor (the thread pool
// that runs Resilience4j's delayed work). levee accepts them with a Warning and ignores them,
// after checking their values as Spring binds them.

const (
	whyMetricsOn  = "ignored: levee's metrics are those of the collector the application registers (leveeprom.NewCollector, leveeotel.New), which the file does not switch"
	whyMetricsOff = "ignored: levee publishes metrics only through a collector the application registers (leveeprom.NewCollector, leveeotel.New): to publish none, register none"
	whyLegacy     = "ignored: it chooses how Resilience4j binds its Micrometer meters; levee's collectors (leveeprom.NewCollector, leveeotel.New) have one way"
	whyScheduler  = "ignored: Go waits on the runtime's timers, with no scheduler thread pool to size"
)

var (
	keyMetricsEnabled = keySpec{name: "enabled", kind: kBool}
	keyCorePoolSize   = keySpec{name: "corePoolSize", kind: kInt}
	keyPropagators    = keySpec{name: "contextPropagators", kind: kList, ignored: whyProps}
)

// metrics reads a section's metrics block: enabled and legacy.enabled.
func (ps *parser) metrics(n *yaml.Node, path string) {
	for _, kv := range ps.pairs(n, path) {
		k, v := kv[0], kv[1]
		p := join(path, k.Value)
		switch norm(k.Value) {
		case "enabled":
			ps.machinery(ps.at(k), p, keyMetricsEnabled, v)
		case "legacy":
			for _, l := range ps.pairs(v, p) {
				lp := join(p, l[0].Value)
				if norm(l[0].Value) != "enabled" {
					ps.fail(ps.at(l[0]), lp, "unknown key: metrics.legacy takes enabled%s", didYouMean(l[0].Value, []string{"enabled"}))
					continue
				}
				ps.machinery(ps.at(l[0]), lp, keySpec{name: "legacy.enabled", kind: kBool}, l[1])
			}
		default:
			ps.fail(ps.at(k), p, "unknown key: metrics takes enabled and legacy.enabled%s", didYouMean(k.Value, []string{"enabled", "legacy"}))
		}
	}
}

// scheduled reads resilience4j.scheduled: its executor block, corePoolSize and
// contextPropagators.
func (ps *parser) scheduled(n *yaml.Node, path string) {
	for _, kv := range ps.pairs(n, path) {
		k, v := kv[0], kv[1]
		p := join(path, k.Value)
		if norm(k.Value) != "executor" {
			ps.fail(ps.at(k), p, "unknown key: scheduled takes executor%s", didYouMean(k.Value, []string{"executor"}))
			continue
		}
		for _, e := range ps.pairs(v, p) {
			ep := join(p, e[0].Value)
			written := e[0].Value
			if m := indexedKey.FindStringSubmatch(written); m != nil && norm(m[1]) == norm(keyPropagators.name) {
				written = m[1]
			}
			switch norm(written) {
			case norm(keyCorePoolSize.name):
				ps.machinery(ps.at(e[0]), ep, keyCorePoolSize, e[1])
			case norm(keyPropagators.name):
				ps.machinery(ps.at(e[0]), ep, keyPropagators, e[1])
			default:
				ps.fail(ps.at(e[0]), ep, "unknown key: scheduled.executor takes corePoolSize and contextPropagators%s",
					didYouMean(e[0].Value, []string{keyCorePoolSize.name, keyPropagators.name}))
			}
		}
	}
}

// machinery checks the value of an ignored key of Spring's machinery as Spring binds it, and
// warns that it is ignored: a Note, or a LikelyMistake when the file asks for what levee does
// not do (metrics.enabled: false).
func (ps *parser) machinery(src Source, path string, sp keySpec, n *yaml.Node) {
	var scalar string
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		ps.fail(src, path, "no value")
		return
	case sp.kind == kList && (n.Kind == yaml.ScalarNode || n.Kind == yaml.SequenceNode):
		// class names, which levee does not load
	case n.Kind != yaml.ScalarNode:
		ps.fail(src, path, "must be a single value, got %s", describe(n))
		return
	case strings.TrimSpace(n.Value) == "":
		ps.fail(src, path, "empty value")
		return
	default:
		scalar = n.Value
	}
	switch sp.name {
	case keyMetricsEnabled.name:
		on, err := parseBool(scalar)
		switch {
		case err != nil:
			ps.fail(src, path, "%v", err)
		case on:
			ps.warn(src, path, "%s", whyMetricsOn)
		default:
			ps.mistake(src, path, "%s", whyMetricsOff)
		}
	case "legacy.enabled":
		if _, err := parseBool(scalar); err != nil {
			ps.fail(src, path, "%v", err)
			return
		}
		ps.warn(src, path, "%s", whyLegacy)
	case keyCorePoolSize.name:
		size, err := parseInt(scalar)
		switch {
		case err != nil:
			ps.fail(src, path, "%v", err)
		case size < 1:
			// Resilience4j's setter refuses it: "corePoolSize must be a positive integer value >= 1".
			ps.fail(src, path, "must be at least 1, got %d", size)
		default:
			ps.warn(src, path, "%s", whyScheduler)
		}
	default:
		ps.warn(src, path, "%s", sp.ignored)
	}
}

// envMachinery reads the variables of the ignored keys: <SECTION>_METRICS_ENABLED,
// <SECTION>_METRICS_LEGACY_ENABLED (rest, after the section) and
// SCHEDULED_EXECUTOR_COREPOOLSIZE or _CONTEXTPROPAGATORS (segs, the whole name after
// RESILIENCE4J_). It reports whether the variable was one of them.
func (ps *parser) envMachinery(src Source, sectionPath string, rest, segs []string, val string) bool {
	node := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val}
	if sectionPath != "" {
		switch strings.Join(rest, "_") {
		case "METRICS_ENABLED":
			ps.machinery(src, sectionPath+".metrics.enabled", keyMetricsEnabled, node)
		case "METRICS_LEGACY_ENABLED":
			ps.machinery(src, sectionPath+".metrics.legacy.enabled", keySpec{name: "legacy.enabled", kind: kBool}, node)
		default:
			return false
		}
		return true
	}
	if len(segs) < 3 || segs[0] != "SCHEDULED" || segs[1] != "EXECUTOR" {
		return false
	}
	path := "resilience4j.scheduled.executor."
	switch key := strings.Join(segs[2:], "_"); {
	case key == "COREPOOLSIZE":
		ps.machinery(src, path+keyCorePoolSize.name, keyCorePoolSize, node)
	case key == "CONTEXTPROPAGATORS" || len(segs) == 4 && segs[2] == "CONTEXTPROPAGATORS" && isDigits(segs[3]):
		p := path + keyPropagators.name
		if len(segs) == 4 {
			p += fmt.Sprintf("[%s]", segs[3])
		}
		ps.machinery(src, p, keyPropagators, node)
	default:
		ps.fail(src, "", "names no key of resilience4j.scheduled.executor: it takes "+
			"RESILIENCE4J_SCHEDULED_EXECUTOR_COREPOOLSIZE and RESILIENCE4J_SCHEDULED_EXECUTOR_CONTEXTPROPAGATORS")
	}
	return true
}
