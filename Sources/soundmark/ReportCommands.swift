import Foundation
import Soundmark

/// The `report …` commands (filled in below).
let reportCommands: [CommandSpec] = []
