package leveeconfig

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// envPrefix starts every variable the loader reads, as Spring's relaxed binding of
// resilience4j.* properties from the environment.
const envPrefix = "RESILIENCE4J_"

// leveeEnvPrefix starts the variables of levee's own sections (levee.adaptive, ...):
// LEVEE_ADAPTIVE_INSTANCES_CHECKOUT_MAXLIMIT. A LEVEE_ variable naming none of them is left
// alone, being someone else's.
const leveeEnvPrefix = "LEVEE_"

// env applies the variables of environ ("NAME=value") that start with RESILIENCE4J_, after
// the file, as Spring Boot's environment overrides an application.yml:
//
//	RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE=20
//	RESILIENCE4J_RETRY_CONFIGS_DEFAULT_RETRYEXCEPTIONS=demo.r4j.GatewayException,java.io.IOException
//	RESILIENCE4J_RETRY_RETRYASPECTORDER=1
//	RESILIENCE4J_BULKHEAD_TAGS_TEAM=checkout
//
// The variable is <prefix>_<SECTION>_<INSTANCES|CONFIGS>_<NAME>_<KEY>, in upper case without
// dashes; NAME (which may hold underscores) matches a name of the file whatever its case,
// dashes and underscores, and is lower-cased otherwise, as Spring binds it. A list is
// comma-separated, or given by index with the index between underscores, Spring's rule for an
// indexed property in a variable (RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0 is
// retryExceptions[0]); as in Spring, a list from the environment replaces the file's whole.
// KEY is one word, as Spring writes a property in a variable (a dot becomes an underscore,
// dashes are removed, upper case): a key written with underscores between its words
// (..._PAYMENT_SLIDING_WINDOW_SIZE) is refused naming the key and the variable meant (see
// envSplitKey). <SECTION>_METRICS_ENABLED, <SECTION>_METRICS_LEGACY_ENABLED and
// SCHEDULED_EXECUTOR_* are ignored with a Warning, as in a file (see envMachinery).
func (ps *parser) env(environ []string) {
	ps.origin++ // the environment is one source
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		root, prefix := "resilience4j", envPrefix
		if strings.HasPrefix(name, leveeEnvPrefix) {
			root, prefix = "levee", leveeEnvPrefix
		} else if !strings.HasPrefix(name, envPrefix) {
			continue
		}
		src := Source{Env: name}
		segs := strings.Split(strings.TrimPrefix(name, prefix), "_")
		sec, rest := ps.envSection(segs, root)
		if sec == nil && root == "levee" {
			continue // LEVEE_* variables of other meanings: only levee's sections are read
		}
		if sec == nil && root == "resilience4j" && ps.envMachinery(src, "", nil, segs, val) {
			continue
		}
		if sec == nil {
			ps.fail(src, "", "names no section of resilience4j: levee reads %s", sectionKeys("resilience4j"))
			continue
		}
		prefix = strings.ToUpper(root) + "_"
		if root == "resilience4j" && ps.envMachinery(src, sec.prefix, rest, nil, val) {
			continue
		}
		node := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val}
		switch {
		case len(rest) >= 3 && (rest[0] == "INSTANCES" || rest[0] == "CONFIGS"):
			into, group := sec.instances, "instances"
			if rest[0] == "CONFIGS" {
				into, group = sec.configs, "configs"
			}
			key := rest[len(rest)-1]
			if last := len(rest) - 1; len(rest) >= 4 && isDigits(rest[last]) {
				if sp, ok := spec(sec.spec.pattern, norm(rest[last-1])); ok && sp.kind == kList {
					// Spring's form of an index in a variable: the index between underscores.
					key = rest[last-1] + "[" + rest[last] + "]"
					rest = rest[:last]
				}
			}
			written := strings.Join(rest[1:len(rest)-1], "_")
			if ps.envSplitKey(src, sec, group, prefix, rest) {
				continue
			}
			var e *entry
			for n, cand := range into {
				if norm(n) == norm(written) {
					e = cand
				}
			}
			if e == nil {
				n := strings.ToLower(written)
				e = &entry{name: n, path: join(sec.prefix, group+"."+n), src: src, props: props{}}
				into[n] = e
			}
			ps.key(sec.spec.pattern, e, key, e.path, src, node)
		case len(rest) == 2 && rest[0] == "TAGS":
			sec.tags[strings.ToLower(rest[1])] = val
		case len(rest) == 1 && sec.spec.order != "" && rest[0] == strings.ToUpper(sec.spec.order):
			sec.order = &value{path: join(sec.prefix, sec.spec.order), spec: keySpec{name: sec.spec.order, kind: kInt}, scalar: val, src: src}
		default:
			ps.fail(src, "", "names no key of %s.%s: use %[3]s%[4]s_INSTANCES_<NAME>_<KEY> or %[3]s%[4]s_CONFIGS_<NAME>_<KEY>",
				root, sec.spec.key, prefix, envSectionName(sec.spec))
		}
	}
}

func envSectionName(s sectionSpec) string {
	return strings.ToUpper(strings.ReplaceAll(s.key, "-", ""))
}

// envSection finds the section a variable's segments start with: THREADPOOLBULKHEAD or
// THREAD_POOL_BULKHEAD for the thread-pool bulkhead.
func (ps *parser) envSection(segs []string, root string) (*rawSection, []string) {
	for i := 1; i <= len(segs) && i <= 3; i++ {
		folded := norm(strings.Join(segs[:i], ""))
		for _, s := range sections {
			if s.root == root && norm(s.key) == folded {
				return ps.sections[s.pattern], segs[i:]
			}
		}
	}
	return nil, nil
}

// envSplitKey refuses a variable whose key is a key of the pattern written with underscores
// between its words (RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDING_WINDOW_SIZE),
// naming the key and the variable that sets it: a variable's underscores are dots, as in
// Spring, so the variable names instance payment_sliding_window's key SIZE. It reports
// whether it refused the variable; a key the pattern has is left to key.
func (ps *parser) envSplitKey(src Source, sec *rawSection, group, prefix string, rest []string) bool {
	pat := sec.spec.pattern
	keySegs, index := rest[1:], ""
	if last := len(keySegs) - 1; last >= 1 && isDigits(keySegs[last]) {
		keySegs, index = keySegs[:last], keySegs[last]
	}
	if k := norm(keySegs[len(keySegs)-1]); k == "baseconfig" {
		return false
	} else if _, ok := spec(pat, k); ok {
		return false
	}
	// The name keeps at least its first segment; the longest run of words that spells a key wins.
	for j := 1; j < len(keySegs)-1; j++ {
		sp, ok := spec(pat, norm(strings.Join(keySegs[j:], "")))
		if !ok || (index != "") != (sp.kind == kList) {
			continue
		}
		name := strings.Join(keySegs[:j], "_")
		want := prefix + envSectionName(sec.spec) + "_" + strings.ToUpper(group) + "_" + name + "_" + strings.ToUpper(sp.name)
		written := strings.Join(keySegs[j:], "_")
		if index != "" {
			want += "_" + index
			written += "_" + index
		}
		path := join(sec.prefix, group+"."+strings.ToLower(strings.Join(rest[1:], ".")))
		ps.fail(src, path, "unknown key of %s: a variable's underscores are dots, as in Spring, so %s is not %s; "+
			"for %s of %s write %s (Spring's rule: a dot becomes an underscore, dashes are removed, upper case)",
			pat, written, sp.name, sp.name, strings.ToLower(name), want)
		return true
	}
	return false
}
