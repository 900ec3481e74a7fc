import Foundation

/// One audio stream of a media input, as ``MediaDecoder`` lists it.
public struct AudioStreamInfo: Sendable, Equatable {
    /// Index in the container's stream list (what `--stream` takes).
    public var index: Int
    /// The stream's language tag (ISO 639-2, e.g. "eng"), `nil` when untagged or "und".
    public var language: String?
    /// FFmpeg's codec name, e.g. "aac".
    public var codec: String
    /// Channel count (0 when unknown).
    public var channels: Int
    /// Whether the container flags it as the default track.
    public var isDefault: Bool

    /// Creates a stream description (all fields as above).
    public init(index: Int, language: String?, codec: String, channels: Int, isDefault: Bool) {
        self.index = index
        self.language = language
        self.codec = codec
        self.channels = channels
        self.isDefault = isDefault
    }

    /// Short label: "1 (eng)", or "1 (no language)".
    public var label: String { "\(index) (\(language ?? "no language"))" }

    /// Long label: "1 (eng, aac, 2 channels, default)".
    public var details: String {
        var parts = [language ?? "no language", codec]
        if channels > 0 { parts.append(channels == 1 ? "1 channel" : "\(channels) channels") }
        if isDefault { parts.append("default") }
        return "\(index) (\(parts.joined(separator: ", ")))"
    }
}

/// ISO 639 language codes: 639-1 (two letters) and 639-2 (three letters, bibliographic and
/// terminology forms) name the same language.
public enum LanguageCode {
    /// The ISO 639-2 codes (lowercased, both forms where they differ) equivalent to `code`:
    /// "en" → ["eng"], "de", "ger" or "deu" → ["deu", "ger"]. A three-letter code not in the
    /// table stands for itself.
    /// - Returns: `nil` when `code` is neither a known two-letter code nor three letters.
    public static func equivalents(of code: String) -> Set<String>? {
        let c = code.lowercased()
        guard c.count == 2 || c.count == 3, c.allSatisfy({ $0 >= "a" && $0 <= "z" }) else { return nil }
        if let set = table[c] { return set }
        return c.count == 3 ? [c] : nil
    }

    /// Whether a stream tagged `tag` (any ISO 639 form) is in the language `code`.
    public static func matches(_ tag: String?, _ code: String) -> Bool {
        guard let tag, let wanted = equivalents(of: code), let have = equivalents(of: tag) else { return false }
        return !wanted.isDisjoint(with: have)
    }

    /// From the Debian iso-codes list (ISO 639-2 entries with a 639-1 code or two forms):
    /// `alpha2:terminology[/bibliographic]`.
    private static let entries = """
        aa:aar ab:abk af:afr ak:aka am:amh ar:ara an:arg as:asm av:ava ae:ave ay:aym az:aze ba:bak bm:bam
        be:bel bn:ben bh:bih bi:bis bo:bod/tib bs:bos br:bre bg:bul ca:cat cs:ces/cze ch:cha ce:che cu:chu
        cv:chv kw:cor co:cos cr:cre cy:cym/wel da:dan de:deu/ger dv:div dz:dzo el:ell/gre en:eng eo:epo
        et:est eu:eus/baq ee:ewe fo:fao fa:fas/per fj:fij fi:fin fr:fra/fre fy:fry ff:ful gd:gla ga:gle
        gl:glg gv:glv gn:grn gu:guj ht:hat ha:hau he:heb hz:her hi:hin ho:hmo hr:hrv hu:hun hy:hye/arm
        ig:ibo io:ido ii:iii iu:iku ie:ile ia:ina id:ind ik:ipk is:isl/ice it:ita jv:jav ja:jpn kl:kal
        kn:kan ks:kas ka:kat/geo kr:kau kk:kaz km:khm ki:kik rw:kin ky:kir kv:kom kg:kon ko:kor kj:kua
        ku:kur lo:lao la:lat lv:lav li:lim ln:lin lt:lit lb:ltz lu:lub lg:lug mh:mah ml:mal mr:mar
        mk:mkd/mac mg:mlg mt:mlt mn:mon mi:mri/mao ms:msa/may my:mya/bur na:nau nv:nav nr:nbl nd:nde ng:ndo
        ne:nep nl:nld/dut nn:nno nb:nob no:nor ny:nya oc:oci oj:oji or:ori om:orm os:oss pa:pan pi:pli
        pl:pol pt:por ps:pus qu:que rm:roh ro:ron/rum rn:run ru:rus sg:sag sa:san si:sin sk:slk/slo sl:slv
        se:sme sm:smo sn:sna sd:snd so:som st:sot es:spa sq:sqi/alb sc:srd sr:srp ss:ssw su:sun sw:swa
        sv:swe ty:tah ta:tam tt:tat te:tel tg:tgk tl:tgl th:tha ti:tir to:ton tn:tsn ts:tso tk:tuk tr:tur
        tw:twi ug:uig uk:ukr ur:urd uz:uzb ve:ven vi:vie vo:vol wa:wln wo:wol xh:xho yi:yid yo:yor za:zha
        zh:zho/chi zu:zul
        """

    private static let table: [String: Set<String>] = {
        var table: [String: Set<String>] = [:]
        for entry in entries.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = entry.split(separator: ":")
            guard parts.count == 2 else { continue }
            let three = Set(parts[1].split(separator: "/").map(String.init))
            var keys = Array(three)
            if parts[0] != "-" { keys.append(String(parts[0])) }
            for key in keys { table[key] = three }
        }
        return table
    }()
}
