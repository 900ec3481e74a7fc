import Foundation

/// One consolidated activity on the timeline: what the recognisers reported for one
/// activity (or one material observation), merged over all refining payloads.
public struct TimelineRow: Equatable, Sendable {
    /// Where and when the row was first observed. Never changed by later payloads.
    public struct FirstSeen: Equatable, Sendable {
        /// `time` of the payload that started the row, in seconds (epoch seconds for
        /// ISO-8601 input); nil when that payload had no time.
        public var time: Double?
        /// `position` (seconds into the material) of the payload that started the row.
        public var position: Double?
        /// The original ISO-8601 `time` string of that payload, when it had one.
        public var timestamp: String?

        /// Creates first-observation data.
        public init(time: Double? = nil, position: Double? = nil, timestamp: String? = nil) {
            self.time = time
            self.position = position
            self.timestamp = timestamp
        }
    }

    /// The activity id, nil for a row started by a payload without one.
    public var activityID: String?
    /// The material id; filled in once if the starting payload lacked it and a refining
    /// payload for the same activity carries it, never changed afterwards.
    public var materialID: String?
    /// Whether a marker trait was seen. Once true it stays true.
    public var marker: Bool
    /// First-observation data.
    public var firstSeen: FirstSeen
    /// Display fields merged over all refining payloads (a known value is never blanked).
    public var fields: [String: TimelineValue]
    /// When the activity ended, in the same units as ``FirstSeen/time``: the `time` of its
    /// end payload (``TimelinePayload/endsActivity``, e.g. the monitor's `segment.ended`) —
    /// even when that payload arrives after a newer row started — else, for a row closed by
    /// a newer row, that row's first-seen time, or for a row closed by expiry its
    /// `expires_at`. Nil while the activity is open (or when those payloads had no time).
    public var end: Double?
    /// True once the row has stopped being current (its activity ended, a newer row started,
    /// or an accepted result's `expires_at` passed). The current row at the end of input is
    /// not closed.
    public var closed: Bool
    /// The `expires_at` of the latest accepted result (`activity_result`) for the row.
    /// Not part of the exported output.
    public var expiresAt: Double?

    /// Creates a row.
    public init(activityID: String? = nil, materialID: String? = nil, marker: Bool = false,
                firstSeen: FirstSeen = FirstSeen(), fields: [String: TimelineValue] = [:],
                end: Double? = nil, closed: Bool = false, expiresAt: Double? = nil) {
        self.activityID = activityID
        self.materialID = materialID
        self.marker = marker
        self.firstSeen = firstSeen
        self.fields = fields
        self.end = end
        self.closed = closed
        self.expiresAt = expiresAt
    }
}

/// What ``ActivityTimeline/apply(_:)`` did with a payload.
public enum TimelineChange: Equatable, Sendable {
    /// A new row was started at this index (closing the previous current row, if any).
    case started(row: Int)
    /// The row at this index was refined (possibly without any visible change).
    case refined(row: Int)
    /// A late end payload set the end of this closed row (and nothing else).
    case ended(row: Int)
    /// The payload was dropped; the reason is suitable for `--verbose` output.
    case ignored(reason: String)
}

/// The activity-timeline consolidation engine: folds recogniser payloads (our own
/// live-monitor events, or mobile SDK callbacks) into rows, in order of first observation.
///
/// At most one row is *current*: always the last row, and only while it is not closed.
/// Plain callbacks (`kind: "campaign"`) can only ever touch the current row:
///
/// - With no current row, a payload starts a row — unless its `activity_id` belongs to an
///   earlier (closed) row, in which case it is a late refinement and is ignored.
/// - A payload *identifies* the current row, and refines it, when:
///   - it has an `activity_id` exactly equal to the row's, and its `material_id` is absent,
///     or equal to the row's, or the row has none (then the row adopts it); or
///   - it has no `activity_id` and its `material_id` equals the row's; or
///   - it has neither id (an anonymous continuation of the current observation).
/// - Otherwise, a payload whose `activity_id` belongs to an earlier row is a late
///   refinement of an older activity and is ignored; any other payload closes the current
///   row and starts a new one. So a different `material_id`, a different non-empty
///   `activity_id`, an `activity_id` when the row has none, or a `material_id`-only payload
///   when the row has no material, all start a new row.
///
/// End payloads (``TimelinePayload/endsActivity``: the monitor's `segment.ended`) end their
/// activity: one that identifies the current row refines it as above, sets the row's
/// ``TimelineRow/end`` to its `time` and closes the row. One that arrives after a newer row
/// started (crossfades and back-to-back tracks: the monitor decides an end only a few seconds
/// after the audio) is not a refinement but the end the recogniser measured: it sets the
/// ``TimelineRow/end`` of the latest row with its `activity_id` (and the row's numeric `end`
/// display field, when it carries one) and changes nothing else. A row closed without an
/// end payload ends where the row that closed it was first seen (or at its `expires_at`).
///
/// Activity ids are only ever consulted across the timeline to *reject* late payloads;
/// material ids are never used as a global key (the same material may legitimately play
/// again later and then gets a new row).
///
/// Refining merges without regressing: `trait.marker == true` sets the marker, a miss
/// never clears it; a display field is overwritten by a later non-blank value, while a
/// later `null` or `""` never blanks a known value. First-observation data (time,
/// position, timestamp) is never changed. Display-field merging is shallow: a nested
/// object value is replaced as a whole.
///
/// An accepted result (`kind: "activity_result"`) with an `activity_id` is authoritative:
/// if any row has that id, the latest such row is refined (merged as above) even when it
/// is closed, and its `expires_at` is recorded; it never starts a row and never changes
/// which row is current. With no such row, it behaves like a plain callback, then records
/// its `expires_at`. Without an `activity_id` it is just a plain callback. Only accepted
/// results can set an expiry; `expires_at` on plain callbacks is ignored.
///
/// Expiry: "now" is the payload's `time`, or, if it has none, the latest `time` seen so
/// far in the stream. When a payload arrives and the current row's recorded `expires_at`
/// is `<= now`, that row is closed first (there is then no current row). An accepted
/// result whose `expires_at <= now` closes its row at once.
///
/// The engine is idempotent under duplication (applying a payload twice in a row is the
/// same as applying it once), and total: no input traps.
public struct ActivityTimeline: Sendable {
    /// The rows, in order of first observation.
    public private(set) var rows: [TimelineRow] = []
    /// The index of the current row, nil when there is none (empty timeline, or the last
    /// row expired). When non-nil it is always `rows.count - 1`.
    public private(set) var currentRow: Int?
    /// The latest payload `time` seen so far (the fallback "now" for expiry checks).
    public private(set) var latestTime: Double?
    /// Indices of the rows of each activity id, ascending (a row's id never changes), so that
    /// a payload finds its activity's rows without a pass over every row.
    private var rowsByActivity: [String: [Int]] = [:]

    /// Creates an empty timeline.
    public init() {}

    /// Creates a timeline by applying `payloads` in order.
    public init<S: Sequence>(payloads: S) where S.Element == TimelinePayload {
        self.init()
        _ = apply(contentsOf: payloads)
    }

    /// Applies `payloads` in order and returns what happened to each.
    @discardableResult
    public mutating func apply<S: Sequence>(contentsOf payloads: S) -> [TimelineChange]
        where S.Element == TimelinePayload
    {
        payloads.map { apply($0) }
    }

    /// Folds one payload into the timeline (see the type documentation for the rules).
    @discardableResult
    public mutating func apply(_ payload: TimelinePayload) -> TimelineChange {
        let now = payload.time ?? latestTime
        if let time = payload.time { latestTime = max(latestTime ?? time, time) }

        // An accepted result that expired ends the current row before anything else.
        if let current = currentRow, isExpired(rows[current], now: now) {
            if rows[current].end == nil { rows[current].end = rows[current].expiresAt }
            close(current)
        }

        // Accepted results are authoritative for their exact activity id.
        if payload.kind == .activityResult, let id = payload.activityID,
           let index = rowsByActivity[id]?.last {
            merge(payload, into: index)
            recordExpiry(of: payload, row: index, now: now)
            return .refined(row: index)
        }

        if let current = currentRow, identifies(payload, rows[current]) {
            merge(payload, into: current)
            if payload.endsActivity { end(current, at: payload) }
            return .refined(row: current)
        }
        if let id = payload.activityID, let indices = rowsByActivity[id], indices.contains(where: { rows[$0].closed }) {
            if payload.endsActivity, let index = indices.last,
               rows[index].closed, payload.materialID == nil || rows[index].materialID == nil
                || payload.materialID == rows[index].materialID {
                end(index, at: payload)
                return .ended(row: index)
            }
            return .ignored(reason: "late refinement of closed activity \"\(id)\"")
        }

        if let current = currentRow {
            if rows[current].end == nil { rows[current].end = payload.time }
            close(current)
        }
        rows.append(TimelineRow(
            activityID: payload.activityID,
            materialID: payload.materialID,
            marker: payload.marker ?? false,
            firstSeen: .init(time: payload.time, position: payload.position, timestamp: payload.timestamp),
            fields: payload.fields))
        let index = rows.count - 1
        if let id = payload.activityID { rowsByActivity[id, default: []].append(index) }
        currentRow = index
        if payload.kind == .activityResult, payload.activityID != nil {
            recordExpiry(of: payload, row: index, now: now)
        }
        if payload.endsActivity { end(index, at: payload) }
        return .started(row: index)
    }

    /// Sets the end of row `index` from end payload `payload` (its `time`, and its numeric
    /// `end` display field when it has one) and closes the row.
    private mutating func end(_ index: Int, at payload: TimelinePayload) {
        if let time = payload.time { rows[index].end = time }
        if let value = payload.fields["end"], value.numberValue != nil { rows[index].fields["end"] = value }
        close(index)
    }

    private func identifies(_ payload: TimelinePayload, _ row: TimelineRow) -> Bool {
        if let id = payload.activityID {
            guard row.activityID == id else { return false }
            guard let material = payload.materialID, let rowMaterial = row.materialID else { return true }
            return material == rowMaterial
        }
        if let material = payload.materialID { return row.materialID == material }
        return true
    }

    private func isExpired(_ row: TimelineRow, now: Double?) -> Bool {
        guard let expiry = row.expiresAt, let now else { return false }
        return expiry <= now
    }

    private mutating func close(_ index: Int) {
        rows[index].closed = true
        if currentRow == index { currentRow = nil }
    }

    private mutating func recordExpiry(of payload: TimelinePayload, row index: Int, now: Double?) {
        if let expiry = payload.expiresAt { rows[index].expiresAt = expiry }
        if isExpired(rows[index], now: now) {
            if rows[index].end == nil, !rows[index].closed { rows[index].end = rows[index].expiresAt }
            close(index)
        }
    }

    private mutating func merge(_ payload: TimelinePayload, into index: Int) {
        if payload.marker == true { rows[index].marker = true }
        if rows[index].materialID == nil, let material = payload.materialID {
            rows[index].materialID = material
        }
        for (key, value) in payload.fields {
            let existing = rows[index].fields[key]
            switch value {
            case .null:
                if existing == nil { rows[index].fields[key] = value }
            case .string("") :
                if existing == nil || existing == .null { rows[index].fields[key] = value }
            default:
                rows[index].fields[key] = value
            }
        }
    }
}
