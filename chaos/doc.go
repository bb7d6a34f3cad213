// Package chaos injects faults into guarded calls on purpose, as Polly's chaos strategies
// (Simmy): to test, in a staging or production-like setting, that the patterns around a
// dependency do what they should when it fails, slows down or answers wrongly.
//
// Four strategies, each built once with New...(name, config) and shared by every call, as
// levee's patterns are:
//
//   - Fault (Polly's fault strategy): the call fails with an error, without reaching the
//     dependency.
//   - Latency (Polly's latency strategy): the call is delayed, honouring its context, then
//     runs.
//   - Outcome[T] (Polly's outcome strategy): the call answers a given value or error without
//     reaching the dependency.
//   - Behaviour (Polly's behavior strategy): a function of yours runs before the call (kill a
//     connection, fill a disk); if it returns an error, the call fails with it.
//
// Each call of a strategy draws whether to inject: with probability Config.InjectionRate,
// from Config.Source when set, so that a test with a seeded source injects into the same calls
// every run. A strategy has an on/off switch, Enable and Disable (Config.Disabled starts it
// off), and optionally a Config.EnabledFunc asked per call; while the switch is off a call costs
// one atomic load and the panic guard every pattern has (no allocation, no draw, no clock), so
// a strategy can stay in a production pipeline, switched off.
//
// A strategy guards a call with Execute (Outcome.Execute), and takes any position of a
// levee.Pipeline through Pipeline.With and Decorator (Outcome.Decorator): innermost, it acts
// as the dependency would, and the breaker, retry and fallback around it see its faults;
// outermost, it acts as the network would in front of the whole pipeline. stream's operators
// take a pipeline per element, so a strategy in it injects per element; a stream.Map function
// can also call Execute itself.
//
// Strategies publish an event per injection (Subscribe) and count injected and passed calls
// (Metrics).
//
// # Differences from Polly
//
//   - The generators (FaultGenerator, LatencyGenerator, EnabledFunc, the outcome and the
//     behaviour) take the call's context.Context where Polly's take a ResilienceContext.
//     Polly's InjectionRateGenerator has no counterpart: the rate is fixed per strategy.
//   - Polly's Randomizer is a func returning a double; here it is a math/rand/v2 Source,
//     which is what a seeded test holds.
//   - The switch (Enable, Disable) is an atomic flag on the strategy, besides Polly's
//     EnabledGenerator (EnabledFunc): flipping it at run time needs no pipeline rebuilt.
package chaos
