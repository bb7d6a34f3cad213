package leveeconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/levee-go/levee/registry"
)

// value is one key's value as written, with where it was written.
type value struct {
	path   string
	spec   keySpec
	scalar string
	list   []string
	src    Source
	// items are where each entry of list was written, when it was written on a line of
	// its own (a YAML sequence, an indexed key or variable); nil for a comma-separated value.
	items []Source
	// origin numbers the source the value came from (a document of a file, or the
	// environment), so that a list from a later source replaces an earlier one's whole.
	origin int
	// node is the mapping of a kMap key, as written.
	node *yaml.Node
	// indexed holds the entries written with their index (retryExceptions[0] in a file,
	// ..._RETRYEXCEPTIONS_0 in the environment) until finishIndexes makes list of them.
	indexed map[int]indexedItem
}

// indexedItem is one entry of a list written by index.
type indexedItem struct {
	name string
	src  Source
	path string
}

// itemSrc is where entry i of the list was written: its own line, or the key's.
func (v *value) itemSrc(i int) Source {
	if i < len(v.items) {
		return v.items[i]
	}
	return v.src
}

// itemPath names entry i of the list: key[i], or the key for a comma-separated value.
func (v *value) itemPath(i int) string {
	if i < len(v.items) {
		return fmt.Sprintf("%s[%d]", strings.TrimSuffix(v.path, indexSuffix(v.path)), i)
	}
	return v.path
}

// indexSuffix returns the "[N]" a path ends with, or "".
func indexSuffix(path string) string {
	if m := indexedKey.FindStringSubmatch(path); m != nil {
		return "[" + m[2] + "]"
	}
	return ""
}

// indexedKey is a key written with a list index, as Spring's indexed form: retryExceptions[0].
var indexedKey = regexp.MustCompile(`^(.*)\[(\d+)\]$`)

// text renders the value as Settings shows it.
func (v *value) text() string {
	switch {
	case v.spec.kind == kList:
		return strings.Join(v.list, ", ")
	case v.node != nil:
		return flowText(v.node)
	}
	return v.scalar
}

// flowText renders a mapping as YAML's flow style, its keys sorted: "{batch: {share: 0.1},
// live: {share: 0.9}}".
func flowText(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return strings.TrimSpace(n.Value)
	}
	type kv struct{ k, v string }
	var items []kv
	for i := 0; i+1 < len(n.Content); i += 2 {
		items = append(items, kv{n.Content[i].Value, flowText(n.Content[i+1])})
	}
	slices.SortFunc(items, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	var parts []string
	for _, it := range items {
		parts = append(parts, it.k+": "+it.v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// props are the keys of one configs or instances entry, by Spring key.
type props map[string]*value

// entry is one configs.NAME or instances.NAME.
type entry struct {
	name  string
	path  string
	src   Source
	props props
}

// rawSection is one pattern's part of the file, before inheritance is resolved.
type rawSection struct {
	spec      sectionSpec
	prefix    string
	configs   map[string]*entry
	instances map[string]*entry
	tags      map[string]string
	order     *value
}

// parser turns a file and the environment into rawSections, collecting every error.
type parser struct {
	file string
	// profiles are the active profiles; profileFile says that file is application-{p}.yml.
	profiles    []string
	profileFile bool
	sawSection  bool // a document read had a resilience4j key
	origin      int  // the source being read, counted from 1 (see value.origin)
	sections    map[registry.Pattern]*rawSection
	errs        []error
	warns       []Warning
}

func newParser(file string) *parser {
	ps := &parser{file: file, sections: map[registry.Pattern]*rawSection{}}
	for _, s := range sections {
		ps.sections[s.pattern] = &rawSection{
			spec: s, prefix: s.root + "." + s.key,
			configs: map[string]*entry{}, instances: map[string]*entry{}, tags: map[string]string{},
		}
	}
	return ps
}

func (ps *parser) at(n *yaml.Node) Source { return Source{File: ps.file, Line: n.Line} }

func (ps *parser) fail(src Source, path, format string, args ...any) {
	ps.errs = append(ps.errs, &Error{Source: src, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (ps *parser) warn(src Source, path, format string, args ...any) {
	ps.warns = append(ps.warns, Warning{Source: src, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// mistake records a warning of level LikelyMistake.
func (ps *parser) mistake(src Source, path, format string, args ...any) {
	ps.warns = append(ps.warns, Warning{Source: src, Path: path, Msg: fmt.Sprintf(format, args...), Level: LikelyMistake})
}

// pairs returns a mapping's keys and values, refusing a key given twice (in any of Spring's
// spellings).
func (ps *parser) pairs(n *yaml.Node, path string) [][2]*yaml.Node {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // "key:" with nothing below: empty
	}
	if n.Kind != yaml.MappingNode {
		ps.fail(ps.at(n), path, "must be a mapping of keys, got %s", describe(n))
		return nil
	}
	var out [][2]*yaml.Node
	seen := map[string]int{}
	values := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			ps.fail(ps.at(k), path, "YAML merge keys (<<) are not supported")
			continue
		}
		if first, dup := seen[norm(k.Value)]; dup {
			if sameAfterBinding(values[norm(k.Value)], v) {
				ps.warn(ps.at(k), join(path, k.Value), "the same as line %d after Spring's relaxed binding: read once", first)
				continue
			}
			ps.fail(ps.at(k), join(path, k.Value), "set twice (first on line %d): the two differ, and Spring's relaxed "+
				"binding makes the names one", first)
			continue
		}
		seen[norm(k.Value)] = k.Line
		values[norm(k.Value)] = v
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		out = append(out, [2]*yaml.Node{k, v})
	}
	return out
}

// sameAfterBinding reports whether two values bind to the same thing: equal scalars (spaces
// trimmed), equal lists, or mappings with the same keys, compared as norm folds them, holding
// the same values.
func sameAfterBinding(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return false
	}
	if a.Kind == yaml.AliasNode {
		a = a.Alias
	}
	if b.Kind == yaml.AliasNode {
		b = b.Alias
	}
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return strings.TrimSpace(a.Value) == strings.TrimSpace(b.Value)
	case yaml.SequenceNode:
		for i := range a.Content {
			if !sameAfterBinding(a.Content[i], b.Content[i]) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		bv := map[string]*yaml.Node{}
		for i := 0; i+1 < len(b.Content); i += 2 {
			bv[norm(b.Content[i].Value)] = b.Content[i+1]
		}
		for i := 0; i+1 < len(a.Content); i += 2 {
			if !sameAfterBinding(a.Content[i+1], bv[norm(a.Content[i].Value)]) {
				return false
			}
		}
		return true
	}
	return false
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "nothing"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlLine finds the line in the parser's errors: "line 3: mapping values are not allowed".
var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// decode reads one file of one or more YAML documents (or a .properties file, see
// decodeProperties) into its documents, each a mapping, in the file's order; an empty
// document is left out, and a syntax error or a document that is not a mapping is an error.
func (ps *parser) decode(f file) []doc {
	ps.file = f.name
	var roots []*yaml.Node
	if isProperties(f.name) {
		roots = ps.decodeProperties(f.data)
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(f.data))
		for {
			var d yaml.Node
			if err := dec.Decode(&d); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
				if m := yamlLine.FindStringSubmatch(msg); m != nil {
					line, _ = strconv.Atoi(m[1])
					msg = m[2]
				}
				ps.fail(Source{File: ps.file, Line: line}, "", "%s", msg)
				return nil
			}
			if len(d.Content) > 0 {
				roots = append(roots, d.Content[0])
			}
		}
	}
	var out []doc
	for _, root := range roots {
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue
		}
		if root.Kind == yaml.AliasNode {
			root = root.Alias
		}
		if root.Kind != yaml.MappingNode {
			ps.fail(ps.at(root), "", "must be a mapping of keys, got %s", describe(root))
			continue
		}
		d := doc{file: f.name, root: root, profileFile: f.profile}
		d.onProfile, d.onProfileKey = findPath(root, "spring", "config", "activate", "on-profile")
		out = append(out, d)
	}
	return out
}

// document reads one document: its resilience4j and levee keys when it applies to the active
// profiles (see activeDoc), a later document's keys over an earlier one's, as Spring loads a
// multi-document file. Every other top-level key belongs to someone else and is left alone.
func (ps *parser) document(d doc) {
	ps.file, ps.profileFile = d.file, d.profileFile
	ps.origin++
	root := d.root
	if !ps.activeDoc(d) {
		return
	}
	// Only the keys of resilience4j and levee are read, whether written nested or dotted
	// ("resilience4j.circuitbreaker:"): the others belong to someone else.
	ours := &yaml.Node{Kind: yaml.MappingNode, Line: root.Line}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if first, _, _ := strings.Cut(k.Value, "."); isRoot(first) {
			ours.Content = append(ours.Content, k, root.Content[i+1])
		}
	}
	if len(ours.Content) == 0 {
		return
	}
	ps.sawSection = true
	for _, kv := range ps.pairs(ps.expand(ours, "", 0), "") {
		ps.root(kv[1], kv[0].Value)
	}
}

// activeDoc reports whether a document applies to the active profiles: a document without
// spring.config.activate.on-profile always does; one with it when one of the profile
// expressions it lists ("prod", "prod, eu", a YAML list, "!prod", "prod & !eu",
// "(prod | staging) & eu") accepts the active profiles, as Spring's. A malformed expression
// is an error, as is a profile document in a profile-specific file.
func (ps *parser) activeDoc(d doc) bool {
	n, at := d.onProfile, d.onProfileKey
	if n == nil {
		return true
	}
	path := "spring.config.activate.on-profile"
	if ps.profileFile {
		ps.fail(ps.at(at), path, "not allowed in a profile-specific file (%s), as in Spring", ps.file)
		return false
	}
	var exprs []string
	switch n.Kind {
	case yaml.ScalarNode:
		exprs = strings.Split(n.Value, ",")
	case yaml.SequenceNode:
		for _, item := range n.Content {
			exprs = append(exprs, strings.Split(item.Value, ",")...)
		}
	default:
		ps.fail(ps.at(at), path, "must be a profile expression or a list of them, got %s", describe(n))
		return false
	}
	active, seen := false, false
	for _, e := range exprs {
		if strings.TrimSpace(e) == "" {
			continue
		}
		seen = true
		m, err := parseProfileExpr(e)
		if err != nil {
			ps.fail(ps.at(at), path, "%v", err)
			return false
		}
		active = active || m(ps.profiles)
	}
	if !seen {
		ps.fail(ps.at(at), path, "empty value: name the profiles the document is for")
	}
	return active
}

// findPath finds the value under the keys of path in mapping n, written nested, dotted or
// mixed (spring.config: {activate.on-profile: x}); it returns the value and its key node.
func findPath(n *yaml.Node, path ...string) (*yaml.Node, *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		segs := strings.Split(k.Value, ".")
		if len(segs) > len(path) {
			continue
		}
		match := true
		for j, seg := range segs {
			if norm(seg) != norm(path[j]) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		if len(segs) == len(path) {
			return v, k
		}
		if found, key := findPath(v, path[len(segs):]...); found != nil {
			return found, key
		}
	}
	return nil, nil
}

// noSection warns of a file without a resilience4j key, which is valid YAML but configures
// nothing: most likely the wrong file, or a section under a misspelt key.
func (ps *parser) noSection() {
	ps.mistake(Source{File: ps.file}, "", "no resilience4j section: the file configures no instance")
}

// expand returns mapping n with its dotted keys expanded into nested mappings, as Spring's
// relaxed binding reads them: "circuitbreaker.instances.payment.slidingWindowSize: 5" is
// "circuitbreaker: {instances: {payment: {slidingWindowSize: 5}}}". A segment in brackets
// ("instances.[a.b]") is one key, as in Spring. Mappings given at the same path (nested or
// dotted, or both) merge; a value given twice at one path is an error naming both lines.
// Key order is kept, first appearance first. The values of tags are left as written, and so
// is anything below an entry's keys (depth counts the keys above n: resilience4j, the section,
// configs or instances, the entry), which no key is read from: a file's aliases can then not
// make the expansion grow without bound.
func (ps *parser) expand(n *yaml.Node, path string, depth int) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode || depth > maxKeyDepth {
		return n
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	literal := map[string]int{} // a key written twice in this mapping, as written
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		if first, dup := literal[k.Value]; dup && k.Tag != "!!merge" {
			// Spring's YAML loader refuses a duplicate key; the same block twice binds alike.
			if sameAfterBinding(n.Content[first+1], v) {
				ps.warn(ps.at(k), join(path, k.Value), "the same as line %d: read once", n.Content[first].Line)
			} else {
				ps.fail(ps.at(k), join(path, k.Value), "written twice in one mapping (first on line %d), "+
					"which Spring's YAML loader refuses", n.Content[first].Line)
			}
			continue
		}
		literal[k.Value] = i
		if k.Tag == "!!merge" {
			out.Content = append(out.Content, k, v) // refused by pairs
			continue
		}
		segs, ok := splitKey(k.Value)
		if !ok {
			ps.fail(ps.at(k), join(path, k.Value), "an empty segment in a dotted key")
			continue
		}
		at, p := out, path
		for j, seg := range segs {
			p = join(p, seg)
			key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg, Line: k.Line, Column: k.Column}
			var val *yaml.Node
			if j < len(segs)-1 {
				val = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: k.Line, Column: k.Column}
			} else if norm(seg) == "tags" {
				val = v
			} else {
				val = ps.expand(v, p, depth+j+1)
			}
			at = ps.put(at, key, val, p)
			if at == nil {
				break
			}
		}
	}
	return out
}

// maxKeyDepth is the depth of the deepest mapping whose keys the parser reads: an entry's, under
// resilience4j, the section and configs or instances.
const maxKeyDepth = 4

// put adds key: val to the mapping m and returns the mapping now at key (nil when it is not
// a mapping). A key m holds already (in any of Spring's spellings) merges with val when both
// are mappings (or one is empty); otherwise it is set twice.
func (ps *parser) put(m, key, val *yaml.Node, path string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		old := m.Content[i+1]
		if norm(m.Content[i].Value) != norm(key.Value) {
			continue
		}
		switch {
		case isEmpty(val) && (old.Kind == yaml.MappingNode || isEmpty(old)):
			if isEmpty(old) {
				old = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: old.Line, Column: old.Column}
				m.Content[i+1] = old
			}
			return old
		case val.Kind == yaml.MappingNode && isEmpty(old):
			m.Content[i+1] = val
			return val
		case val.Kind == yaml.MappingNode && old.Kind == yaml.MappingNode:
			if isEntryPath(path) && springMapKey(m.Content[i].Value) != springMapKey(key.Value) {
				// Two instance names that levee's folding makes one, which Spring keeps apart.
				ps.fail(ps.at(key), path, "%q and %q (line %d) are one name to levee but two instances to Spring, "+
					"which keeps a name's case and dashes: write one spelling", key.Value, m.Content[i].Value, m.Content[i].Line)
				return nil
			}
			for j := 0; j+1 < len(val.Content); j += 2 {
				ps.put(old, val.Content[j], val.Content[j+1], join(path, val.Content[j].Value))
			}
			return old
		}
		if sameAfterBinding(old, val) {
			return nil // the same value twice binds alike
		}
		ps.fail(ps.at(key), path, "set twice (first on line %d)", m.Content[i].Line)
		return nil
	}
	m.Content = append(m.Content, key, val)
	if val.Kind != yaml.MappingNode {
		return nil
	}
	return val
}

// springMapKey is a map key as Spring binds it from a file: "If the key is not surrounded by
// [], any characters that are not alpha-numeric, - or . are removed" (Spring Boot's
// reference, Binding Maps); its case and dashes are kept, so payment and Payment, or
// pay-ment, are distinct instances to Spring, and pay_ment is payment.
func springMapKey(k string) string {
	if strings.HasPrefix(k, "[") && strings.HasSuffix(k, "]") {
		return k
	}
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, k)
}

// isEntryPath reports whether path names an entry: resilience4j.<section>.instances.NAME or
// .configs.NAME.
func isEntryPath(path string) bool {
	segs := strings.Split(path, ".")
	return len(segs) == 4 && (norm(segs[2]) == "instances" || norm(segs[2]) == "configs")
}

func isEmpty(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// splitKey splits a dotted key into its segments, a bracketed segment ("[a.b]") whole and
// without its brackets. ok is false for an empty segment ("a..b", "a.").
func splitKey(k string) (segs []string, ok bool) {
	if !strings.ContainsAny(k, ".[") {
		return []string{k}, true
	}
	for k != "" {
		var seg string
		if k[0] == '[' {
			end := strings.IndexByte(k, ']')
			if end < 0 {
				return nil, false
			}
			seg, k = k[1:end], k[end+1:]
			if k != "" && k[0] != '.' {
				return nil, false
			}
		} else {
			end := strings.IndexAny(k, ".")
			if end < 0 {
				end = len(k)
			}
			seg, k = k[:end], k[end:]
		}
		if seg == "" {
			return nil, false
		}
		segs = append(segs, seg)
		if k != "" {
			k = k[1:] // the dot
			if k == "" {
				return nil, false
			}
		}
	}
	return segs, true
}

// isRoot reports whether a top-level key is one the loader reads: resilience4j, or levee.
func isRoot(k string) bool {
	for _, s := range sections {
		if norm(s.root) == norm(k) {
			return true
		}
	}
	return false
}

// root reads the sections under a top-level key, resilience4j or levee.
func (ps *parser) root(n *yaml.Node, path string) {
	for _, kv := range ps.pairs(n, path) {
		k, v := kv[0], kv[1]
		var sec *rawSection
		for _, s := range sections {
			if norm(s.root) == norm(path) && norm(s.key) == norm(k.Value) {
				sec = ps.sections[s.pattern]
			}
		}
		p := join(path, k.Value)
		if sec == nil && norm(path) == "resilience4j" && norm(k.Value) == "scheduled" {
			ps.scheduled(v, p)
			continue
		}
		if sec == nil {
			ps.fail(ps.at(k), p, "unknown key: levee reads %s%s", sectionKeys(path), didYouMean(k.Value, sectionNames(path)))
			continue
		}
		sec.prefix = p
		ps.section(sec, v, p)
	}
}

// sectionKeys lists the sections under root (resilience4j or levee).
func sectionKeys(root string) string { return strings.Join(sectionNames(root), ", ") }

func sectionNames(root string) []string {
	var ks []string
	for _, s := range sections {
		if norm(s.root) == norm(root) {
			ks = append(ks, s.key)
		}
	}
	return ks
}

func (ps *parser) section(sec *rawSection, n *yaml.Node, path string) {
	for _, kv := range ps.pairs(n, path) {
		k, v := kv[0], kv[1]
		p := join(path, k.Value)
		switch f := norm(k.Value); {
		case f == "configs" || f == "instances":
			into := sec.instances
			if f == "configs" {
				into = sec.configs
			}
			for _, e := range ps.pairs(v, p) {
				ps.entry(sec, into, e[0], e[1], p)
			}
		case f == "backends":
			ps.fail(ps.at(k), p, "Resilience4j 1's name for instances, removed in 2: use instances")
		case f == "tags":
			ps.tags(sec, v, p, "")
		case f == "metrics" && sec.spec.root == "resilience4j":
			ps.metrics(v, p)
		case sec.spec.order != "" && f == norm(sec.spec.order):
			if v.Kind != yaml.ScalarNode {
				ps.fail(ps.at(k), p, "must be an integer, got %s", describe(v))
				continue
			}
			sec.order = &value{path: p, spec: keySpec{name: sec.spec.order, kind: kInt}, scalar: v.Value, src: ps.at(k)}
		default:
			known := []string{"configs", "instances", "tags"}
			if sec.spec.root == "resilience4j" {
				known = append(known, "metrics")
			}
			if sec.spec.order != "" {
				known = append(known, sec.spec.order)
			}
			ps.fail(ps.at(k), p, "unknown key: %s takes configs, instances, tags%s%s", sec.spec.key, orderKey(sec.spec), didYouMean(k.Value, known))
		}
	}
}

// tags reads a section's tags: a tag's name may hold dots, written nested or dotted
// ("tags.app.team: checkout" is the tag app.team), as Spring binds a Map<String, String>.
func (ps *parser) tags(sec *rawSection, n *yaml.Node, path, prefix string) {
	for _, t := range ps.pairs(n, path) {
		name := join(prefix, t[0].Value)
		if t[1].Kind == yaml.MappingNode {
			ps.tags(sec, t[1], join(path, t[0].Value), name)
			continue
		}
		if t[1].Kind != yaml.ScalarNode {
			ps.fail(ps.at(t[0]), join(path, t[0].Value), "a tag's value must be a string, got %s", describe(t[1]))
			continue
		}
		sec.tags[name] = t[1].Value
	}
}

func orderKey(s sectionSpec) string {
	if s.order == "" {
		return ""
	}
	return " and " + s.order
}

// indexedEntry stores key[index], an entry of a list key written by its index, as Spring's
// indexed form. As in Spring, a list comes whole from one source: indexes in the
// environment replace the file's list, and the file's indexes are not mixed with the key's
// plain list.
func (ps *parser) indexedEntry(pat registry.Pattern, e *entry, key, index, path string, src Source, n *yaml.Node) {
	p := join(path, key+"["+index+"]")
	sp, ok := spec(pat, norm(key))
	if !ok {
		known := []string{}
		for _, sp := range specs[pat] {
			if sp.kind == kList {
				known = append(known, sp.name)
			}
		}
		ps.fail(src, p, "unknown list key of %s%s", pat, didYouMean(key, known))
		return
	}
	if sp.kind != kList {
		ps.fail(src, p, "%s is not a list: an index applies to a list key only", sp.name)
		return
	}
	if src.Env != "" {
		p = join(path, sp.name+"["+index+"]")
	}
	i, err := strconv.Atoi(index)
	if err != nil || i > 1<<16 {
		ps.fail(src, p, "index %s is out of range", index)
		return
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || strings.TrimSpace(n.Value) == "" {
		ps.fail(src, p, "a list entry must be one name, got %s", describe(n))
		return
	}
	v := e.props[sp.name]
	switch {
	case v == nil, v.origin != ps.origin:
		// new, or a later source (a document, a profile's file, the environment) replacing
		// an earlier one's list whole, as Spring binds a list from one source only
		v = &value{path: join(path, sp.name), spec: sp, src: src, indexed: map[int]indexedItem{}, origin: ps.origin}
		e.props[sp.name] = v
	case v.indexed == nil:
		ps.fail(src, p, "conflicts with %s (%s): write the list either whole or by index", v.path, v.src)
		return
	}
	if old, dup := v.indexed[i]; dup {
		ps.fail(src, p, "set twice (first at %s)", old.src)
		return
	}
	v.indexed[i] = indexedItem{name: strings.TrimSpace(n.Value), src: src, path: p}
	if sourceCmp(src, v.src) < 0 {
		v.src = src
	}
}

// finishIndexes turns the lists written by index into lists, refusing a gap: Spring binds
// key[0], key[1], ... while they follow each other, and refuses an index left unbound.
func (ps *parser) finishIndexes() {
	for _, sec := range ps.sections {
		for _, group := range []map[string]*entry{sec.configs, sec.instances} {
			for _, e := range group {
				for _, v := range e.props {
					if v.indexed == nil {
						continue
					}
					idx := slices.Sorted(maps.Keys(v.indexed))
					for want, i := range idx {
						if i != want {
							it := v.indexed[i]
							ps.fail(it.src, it.path, "index %d without index %d: a list's indexes run from 0 without a gap, as Spring binds them", i, want)
							break
						}
						v.list = append(v.list, v.indexed[i].name)
						v.items = append(v.items, v.indexed[i].src)
					}
					v.src = v.indexed[idx[0]].src
				}
			}
		}
	}
}

// entry reads configs.NAME or instances.NAME.
func (ps *parser) entry(sec *rawSection, into map[string]*entry, k, n *yaml.Node, path string) {
	name := k.Value
	p := join(path, name)
	if name == "" {
		ps.fail(ps.at(k), p, "an empty name")
		return
	}
	// An entry of an earlier document (a profile's) is merged into: its keys over the earlier's.
	e := into[name]
	if e == nil {
		e = &entry{name: name, path: p, src: ps.at(k), props: props{}}
		into[name] = e
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // "payment:" alone: an instance with the defaults
	}
	for _, kv := range ps.pairs(n, p) {
		ps.key(sec.spec.pattern, e, kv[0].Value, p, ps.at(kv[0]), kv[1])
	}
}

// key stores one instance key, from a node of the file or (node nil) from a variable's text.
func (ps *parser) key(pat registry.Pattern, e *entry, written, path string, src Source, n *yaml.Node) {
	p := join(path, written)
	if m := indexedKey.FindStringSubmatch(written); m != nil {
		ps.indexedEntry(pat, e, m[1], m[2], path, src, n)
		return
	}
	f := norm(written)
	var sp keySpec
	if f == "baseconfig" {
		sp = keySpec{name: "baseConfig", kind: kString}
	} else {
		var ok bool
		sp, ok = spec(pat, f)
		if !ok {
			known := []string{"baseConfig"}
			for _, sp := range specs[pat] {
				known = append(known, sp.name)
			}
			ps.fail(src, p, "unknown key of %s%s", pat, didYouMean(written, known))
			return
		}
	}
	if src.Env != "" {
		p = join(path, sp.name) // the variable's upper case, spelt as in a file
	}
	v := &value{path: p, spec: sp, src: src, origin: ps.origin}
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		ps.fail(src, p, "no value")
		return
	case sp.kind == kMap && n.Kind == yaml.MappingNode:
		v.node = n
	case sp.kind == kMap:
		ps.fail(src, p, "must be a mapping of names to their keys, got %s", describe(n))
		return
	case n.Kind == yaml.ScalarNode && sp.kind == kList:
		for item := range strings.SplitSeq(n.Value, ",") {
			if item = strings.TrimSpace(item); item != "" {
				v.list = append(v.list, item)
			}
		}
	case n.Kind == yaml.ScalarNode:
		v.scalar = n.Value
		if strings.TrimSpace(n.Value) == "" && sp.kind != kList {
			ps.fail(src, p, "empty value")
			return
		}
	case n.Kind == yaml.SequenceNode && sp.kind == kList:
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				ps.fail(ps.at(item), p, "a list item must be a name, got %s", describe(item))
				return
			}
			v.list = append(v.list, strings.TrimSpace(item.Value))
			v.items = append(v.items, ps.at(item))
		}
	default:
		ps.fail(src, p, "must be a single value, got %s", describe(n))
		return
	}
	switch {
	case sp.refused != "":
		ps.fail(src, p, "%s", sp.refused)
		return
	case sp.ignored != "":
		// Ignored, but Spring would still bind it: a value of the wrong type fails there.
		if err := checkKind(sp.kind, v.scalar); err != nil {
			ps.fail(src, p, "%v", err)
			return
		}
		ps.warn(src, p, "%s", sp.ignored)
	}
	if old := e.props[sp.name]; old != nil && old.indexed != nil && old.origin == ps.origin {
		ps.fail(src, p, "conflicts with %s (%s): write the list either whole or by index", old.path, old.src)
		return
	}
	e.props[sp.name] = v
}

// checkKind reports whether a scalar reads as a value of kind k, as Spring binds it.
func checkKind(k kind, s string) error {
	var err error
	switch k {
	case kBool:
		_, err = parseBool(s)
	case kInt:
		_, err = parseInt(s)
	case kFloat:
		_, err = parseFloat(s)
	case kDuration:
		_, err = ParseDuration(s)
	}
	return err
}
