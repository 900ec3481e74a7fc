extension MediaItem {
    /// The title to show a person (text output, set-lists, CUE sheets, subtitles, reports):
    /// ``title`` when it holds a character other than white space, else ``id``. A reference
    /// stored without a title, or with an empty one (`--title ""`, an empty tag or metadata
    /// cell, an imported ShazamKit item without `sh_title`), is shown by its id.
    public var displayTitle: String { MediaItem.displayTitle(title, id: id) }

    /// `title` when it holds a character other than white space, else `id` (see ``displayTitle``);
    /// for records that keep a title and a reference id apart (library airings).
    public static func displayTitle(_ title: String?, id: String) -> String {
        guard let title, title.contains(where: { !$0.isWhitespace }) else { return id }
        return title
    }

    /// `text` when it holds a character other than white space, else `nil`: an artist or
    /// subtitle that is empty is shown as absent.
    public static func nonBlank(_ text: String?) -> String? {
        guard let text, text.contains(where: { !$0.isWhitespace }) else { return nil }
        return text
    }
}
