package leveeconfig

import (
	"strconv"
	"strings"

	"github.com/levee-go/levee/registry"
)

// Source says where a value came from: a line of a file, or an environment variable.
type Source struct {
	// File is the name of the file, as given to Load or Parse; empty for a variable.
	File string
	// Line is the line of the key in File, from 1; 0 for a variable or a default.
	Line int
	// Env is the name of the environment variable that set the value, else empty.
	Env string
}

// String returns "application.yml:12", "application.yml" for the whole file, "env RESILIENCE4J_RETRY_INSTANCES_PAYMENT_MAXATTEMPTS"
// or "default" for a value that no file or variable set.
func (s Source) String() string {
	switch {
	case s.Env != "":
		return "env " + s.Env
	case s.Line > 0:
		return s.File + ":" + strconv.Itoa(s.Line)
	case s.File != "":
		return s.File
	}
	return "default"
}

// Error is a load error: what is wrong with the value at Path, set at Source. Load and Parse
// return every error of a file joined with errors.Join; each is an *Error.
type Error struct {
	// Source is where the value was set: the file and line, or the variable.
	Source Source
	// Path is the key's path as written, e.g.
	// "resilience4j.circuitbreaker.instances.payment.slidingWindowSize".
	Path string
	// Msg says what is wrong and what is allowed.
	Msg string
}

// Error returns "application.yml:12: resilience4j.retry.instances.payment.maxAttempts: must be
// at least 1, got 0", or with "env VAR" in place of the file and line.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Source.String() + ": " + e.Msg
	}
	return e.Source.String() + ": " + e.Path + ": " + e.Msg
}

// Warning is a setting accepted but not honoured as written (a Spring-only key), or a
// configuration whose effect deserves a look (aspect orders set only in part). Config.Warnings
// lists them in file order, then the variables'.
type Warning struct {
	// Source is where the key was set; Path is its path ("" for a warning about the whole
	// file, as the aspect orders'); Msg says what levee does with it.
	Source Source
	Path   string
	Msg    string
	// Level says how much the warning deserves a look: a Note (a key levee accepts without a
	// counterpart, a default worth knowing) or a LikelyMistake (a key that has no effect as
	// written, a default that is rarely what the file meant).
	Level Level
}

// Level grades a Warning.
type Level int

const (
	// Note is a warning about a choice that is most likely deliberate.
	Note Level = iota
	// LikelyMistake is a warning about a setting that most likely does not do what was meant.
	LikelyMistake
)

// String returns "note" or "likely mistake".
func (l Level) String() string {
	if l == LikelyMistake {
		return "likely mistake"
	}
	return "note"
}

// String renders the warning as an Error renders an error.
func (w Warning) String() string {
	if w.Path == "" {
		return w.Source.String() + ": " + w.Msg
	}
	return w.Source.String() + ": " + w.Path + ": " + w.Msg
}

// Setting is one key of an instance's effective configuration, as Config.Settings lists it.
type Setting struct {
	// Key is Resilience4j's Spring key, e.g. "slidingWindowSize".
	Key string
	// Value is the value in force, as written in the file or variable (a list joined with
	// ", "), or the default's in the same form.
	Value string
	// Source is where Value came from; Source.String() is "default" for a default.
	Source Source
}

// Unchanged is a change of a new configuration that Config.Reload could not make to an
// existing instance, and why.
type Unchanged struct {
	// Pattern and Name name the instance; both are empty for a change of the aspect order.
	Pattern registry.Pattern
	Name    string
	// Key is the Spring key whose value differs ("" for the whole instance or for the
	// aspect order).
	Key string
	// From and To are the values in force and the new file's.
	From, To string
	// Reason says why the change was not made, and how to make it.
	Reason string
}

// String returns e.g. "circuitbreaker payment slidingWindowSize 10 -> 20: <reason>", or
// "aspect order <from> -> <to>: <reason>" for a change of order.
func (u Unchanged) String() string {
	var parts []string
	if u.Pattern == "" {
		parts = append(parts, "aspect order")
	} else {
		parts = append(parts, string(u.Pattern), u.Name)
	}
	if u.Key != "" {
		parts = append(parts, u.Key)
	}
	if u.From != "" || u.To != "" {
		parts = append(parts, u.From, "->", u.To)
	}
	return strings.Join(parts, " ") + ": " + u.Reason
}
