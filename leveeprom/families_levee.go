package leveeprom

import "github.com/prometheus/client_golang/prometheus"

// The names of the families of the patterns Resilience4j has none of, levee's own, named in
// the style of Resilience4j's (levee_<pattern>_<figure>, base units, counters ending in
// _total, a kind label for a counter's outcomes).
const (
	// adaptive.Limiter
	AdaptiveLimit                = "levee_adaptive_limit"
	AdaptiveLimitEstimate        = "levee_adaptive_limit_estimate"
	AdaptiveInFlightCalls        = "levee_adaptive_in_flight_calls"
	AdaptiveQueueDepth           = "levee_adaptive_queue_depth"
	AdaptiveCalls                = "levee_adaptive_calls_total"
	AdaptiveNoLoadLatency        = "levee_adaptive_no_load_latency_seconds"
	AdaptiveShortRTT             = "levee_adaptive_short_rtt_seconds"
	AdaptiveLongRTT              = "levee_adaptive_long_rtt_seconds"
	AdaptiveProbing              = "levee_adaptive_probing"
	AdaptiveAlgorithmInfo        = "levee_adaptive_algorithm_info"
	PartitionedLimit             = "levee_adaptive_partitioned_limit"
	PartitionedInFlightCalls     = "levee_adaptive_partitioned_in_flight_calls"
	PartitionedDelayedCalls      = "levee_adaptive_partitioned_delayed_calls"
	PartitionLimit               = "levee_adaptive_partition_limit"
	PartitionShare               = "levee_adaptive_partition_share"
	PartitionInFlightCalls       = "levee_adaptive_partition_in_flight_calls"
	PartitionDelayedCalls        = "levee_adaptive_partition_delayed_calls"
	PartitionCalls               = "levee_adaptive_partition_calls_total"
	KeyedLimiterKeys             = "levee_adaptive_keyed_keys"
	KeyedLimiterKeyLimit         = "levee_adaptive_keyed_key_limit"
	KeyedLimiterRejectedCalls    = "levee_adaptive_keyed_rejected_calls_total"
	PrioritizerCalls             = "levee_prioritizer_calls_total"
	PrioritizerQueuedCalls       = "levee_prioritizer_queued_calls"
	PrioritizerRejectionRate     = "levee_prioritizer_rejection_rate"
	PrioritizerRejectionLevel    = "levee_prioritizer_rejection_threshold"
	ThrottleWindowRequests       = "levee_throttle_window_requests"
	ThrottleWindowAccepts        = "levee_throttle_window_accepts"
	ThrottleCalls                = "levee_throttle_calls_total"
	ThrottleRejectionProbability = "levee_throttle_rejection_probability"
	KeyedKeys                    = "levee_keyed_keys"
	KeyedMaxKeys                 = "levee_keyed_max_keys"
	KeyedLookups                 = "levee_keyed_lookups_total"
	KeyedCreations               = "levee_keyed_creations_total"
	KeyedEvictions               = "levee_keyed_evictions_total"
	KeyedRefusedKeys             = "levee_keyed_refused_keys_total"
	KeyedCircuitBreakers         = "levee_keyed_circuitbreakers"
	KeyedCircuitBreakerState     = "levee_keyed_circuitbreaker_state"
	KeyedAdaptiveLimit           = "levee_keyed_adaptive_limit"
	KeyedAdaptiveInFlightCalls   = "levee_keyed_adaptive_in_flight_calls"
	StoreLimiterDecisions        = "levee_ratelimiter_store_decisions_total"
	StoreLimiterErrors           = "levee_ratelimiter_store_errors_total"
	StoreLimiterEpisodes         = "levee_ratelimiter_store_fallback_episodes_total"
	StoreLimiterDegraded         = "levee_ratelimiter_store_degraded"
	StoreLimiterReplicas         = "levee_ratelimiter_store_replicas"
	StoreLimiterLimitForPeriod   = "levee_ratelimiter_store_limit_for_period"
	StoreLimiterFallbackLimit    = "levee_ratelimiter_store_fallback_limit_for_period"
	StoreLimiterAvailable        = "levee_ratelimiter_store_available_permissions"
	StoreLimiterWaiting          = "levee_ratelimiter_store_waiting_threads"
	StoreBreakerRecordState      = "levee_circuitbreaker_store_record_state"
	StoreBreakerRecordVersion    = "levee_circuitbreaker_store_record_version"
	StoreBreakerRecordInfo       = "levee_circuitbreaker_store_record_info"
	StoreBreakerTransitions      = "levee_circuitbreaker_store_transitions_total"
	StoreBreakerErrors           = "levee_circuitbreaker_store_errors_total"
	StoreBreakerLocalDecisions   = "levee_circuitbreaker_store_local_decisions_total"
	StoreBreakerTrialRefusals    = "levee_circuitbreaker_store_trial_refusals_total"
	StoreBreakerAvailable        = "levee_circuitbreaker_store_available"
)

// The label names of levee's own families besides name, kind and state; tag keys may not
// take them.
const (
	labelPartition = "partition"
	labelPriority  = "priority"
	labelKey       = "key"
	labelAlgorithm = "algorithm"
	labelOrigin    = "origin"
	labelReplica   = "replica"
)

var reservedLabels = []string{labelPartition, labelPriority, labelKey, labelAlgorithm, labelOrigin, labelReplica}

const (
	gauge   = prometheus.GaugeValue
	counter = prometheus.CounterValue
)

var (
	famALLimit    = family{AdaptiveLimit, "The current concurrency limit", "", gauge, nil}
	famALEstimate = family{AdaptiveLimitEstimate, "The limit the algorithm computed, before it is truncated to whole calls", "", gauge, nil}
	famALInFlight = family{AdaptiveInFlightCalls, "The number of calls holding a permit", "", gauge, nil}
	famALQueue    = family{AdaptiveQueueDepth, "The number of callers waiting for a permit", "", gauge, nil}
	famALCalls    = family{AdaptiveCalls, "The number of calls permitted, rejected and ended as dropped", labelKind, counter, nil}
	famALNoLoad   = family{AdaptiveNoLoadLatency, "The no-load latency the limit is measured against", "", gauge, nil}
	famALShort    = family{AdaptiveShortRTT, "The average latency of the last window (Gradient2)", "", gauge, nil}
	famALLong     = family{AdaptiveLongRTT, "The long-term average latency (Gradient2)", "", gauge, nil}
	famALProbing  = family{AdaptiveProbing, "1 while a probe re-measures the no-load latency (Vegas), else 0", "", gauge, nil}
	famALInfo     = family{AdaptiveAlgorithmInfo, "The algorithm moving the limit", labelAlgorithm, gauge, nil}

	famPLLimit     = family{PartitionedLimit, "The current concurrency limit of all partitions", "", gauge, nil}
	famPLInFlight  = family{PartitionedInFlightCalls, "The number of calls of all partitions holding a permit", "", gauge, nil}
	famPLDelayed   = family{PartitionedDelayedCalls, "The number of refused callers waiting out a rejection delay", "", gauge, nil}
	famPartLimit   = family{PartitionLimit, "The partition's share of the limit in calls", labelPartition, gauge, nil}
	famPartShare   = family{PartitionShare, "The partition's guaranteed share of the limit, from 0 to 1", labelPartition, gauge, nil}
	famPartFlight  = family{PartitionInFlightCalls, "The number of the partition's calls holding a permit", labelPartition, gauge, nil}
	famPartDelayed = family{PartitionDelayedCalls, "The number of the partition's refused callers waiting out its rejection delay", labelPartition, gauge, nil}
	famPartCalls   = family{PartitionCalls, "The number of the partition's calls permitted and rejected", labelPartition, counter, []string{labelKind}}
	famKLKeys      = family{KeyedLimiterKeys, "The number of keys with calls in flight", "", gauge, nil}
	famKLShare     = family{KeyedLimiterKeyLimit, "Each key's share of the limit in calls", "", gauge, nil}
	famKLRejected  = family{KeyedLimiterRejectedCalls, "The number of calls rejected because too many keys were in flight or their key used its share", labelKind, counter, nil}

	famPRCalls     = family{PrioritizerCalls, "The number of calls admitted, shed and rejected by priority", labelPriority, counter, []string{labelKind}}
	famPRQueued    = family{PrioritizerQueuedCalls, "The number of calls waiting at a limiter by priority", labelPriority, gauge, nil}
	famPRRate      = family{PrioritizerRejectionRate, "The fraction of recent levels shed, from 0 to 1", "", gauge, nil}
	famPRThreshold = family{PrioritizerRejectionLevel, "The lowest level not shed (0 to 500; the levels below it are shed)", "", gauge, nil}

	famTHRequests    = family{ThrottleWindowRequests, "The number of requests sent to the backend within the window", "", gauge, nil}
	famTHAccepts     = family{ThrottleWindowAccepts, "The number of requests the backend accepted within the window", "", gauge, nil}
	famTHCalls       = family{ThrottleCalls, "The number of calls permitted and throttled on the client side", labelKind, counter, nil}
	famTHProbability = family{ThrottleRejectionProbability, "The probability a call is throttled on the client side now, from 0 to 1", "", gauge, nil}

	famKFKeys      = family{KeyedKeys, "The number of keys held", "", gauge, nil}
	famKFMax       = family{KeyedMaxKeys, "The maximum number of keys held", "", gauge, nil}
	famKFLookups   = family{KeyedLookups, "The number of lookups that found their key (hit) or created it (miss)", labelKind, counter, nil}
	famKFCreations = family{KeyedCreations, "The number of instances created and creations failed", labelKind, counter, nil}
	famKFEvictions = family{KeyedEvictions, "The number of keys evicted by cause", labelKind, counter, nil}
	famKFRefused   = family{KeyedRefusedKeys, "The number of new keys refused because every key held was protected", "", counter, nil}
	famKFBreakers  = family{KeyedCircuitBreakers, "The number of circuit breakers in each state", labelState, gauge, nil}
	famKFKeyState  = family{KeyedCircuitBreakerState, "The states of each key's circuit breaker", labelKey, gauge, []string{labelState}}
	famKFKeyLimit  = family{KeyedAdaptiveLimit, "The current concurrency limit of each key's limiter", labelKey, gauge, nil}
	famKFKeyFlight = family{KeyedAdaptiveInFlightCalls, "The number of calls holding a permit of each key's limiter", labelKey, gauge, nil}

	famSLDecisions = family{StoreLimiterDecisions, "The number of permission decisions by kind", labelKind, counter, nil}
	famSLErrors    = family{StoreLimiterErrors, "The number of round trips to the store that failed or that the store breaker did not permit", labelKind, counter, nil}
	famSLEpisodes  = family{StoreLimiterEpisodes, "The number of episodes of store unavailability begun", "", counter, nil}
	famSLDegraded  = family{StoreLimiterDegraded, "1 during an episode of store unavailability, else 0", "", gauge, nil}
	famSLReplicas  = family{StoreLimiterReplicas, "The number of live replicas last seen in the store", "", gauge, nil}
	famSLLimit     = family{StoreLimiterLimitForPeriod, "The fleet's limit per period", "", gauge, nil}
	famSLFallback  = family{StoreLimiterFallbackLimit, "This replica's local share of the limit during an episode", "", gauge, nil}
	famSLAvailable = family{StoreLimiterAvailable, "The number of available permissions", "", gauge, nil}
	famSLWaiting   = family{StoreLimiterWaiting, "The number of waiting threads", "", gauge, nil}

	famSBState     = family{StoreBreakerRecordState, "The state of the shared record as last seen", labelState, gauge, nil}
	famSBVersion   = family{StoreBreakerRecordVersion, "The version of the shared record as last seen", "", gauge, nil}
	famSBInfo      = family{StoreBreakerRecordInfo, "The replica that decided the shared record, and this replica", labelOrigin, gauge, []string{labelReplica}}
	famSBTrans     = family{StoreBreakerTransitions, "The number of shared transitions published, adopted and lost in a conflict", labelKind, counter, nil}
	famSBErrors    = family{StoreBreakerErrors, "The number of failed exchanges with the store", "", counter, nil}
	famSBLocal     = family{StoreBreakerLocalDecisions, "The number of transitions decided locally while the store was unavailable", "", counter, nil}
	famSBTrial     = family{StoreBreakerTrialRefusals, "The number of trial calls refused because another replica held the trial", "", counter, nil}
	famSBAvailable = family{StoreBreakerAvailable, "1 when the last exchange with the store succeeded, else 0", "", gauge, nil}
)

var leveeFamilies = []*family{
	&famALLimit, &famALEstimate, &famALInFlight, &famALQueue, &famALCalls, &famALNoLoad, &famALShort,
	&famALLong, &famALProbing, &famALInfo,
	&famPLLimit, &famPLInFlight, &famPLDelayed, &famPartLimit, &famPartShare, &famPartFlight,
	&famPartDelayed, &famPartCalls, &famKLKeys, &famKLShare, &famKLRejected,
	&famPRCalls, &famPRQueued, &famPRRate, &famPRThreshold,
	&famTHRequests, &famTHAccepts, &famTHCalls, &famTHProbability,
	&famKFKeys, &famKFMax, &famKFLookups, &famKFCreations, &famKFEvictions, &famKFRefused,
	&famKFBreakers, &famKFKeyState, &famKFKeyLimit, &famKFKeyFlight,
	&famSLDecisions, &famSLErrors, &famSLEpisodes, &famSLDegraded, &famSLReplicas, &famSLLimit,
	&famSLFallback, &famSLAvailable, &famSLWaiting,
	&famSBState, &famSBVersion, &famSBInfo, &famSBTrans, &famSBErrors, &famSBLocal, &famSBTrial,
	&famSBAvailable,
}
