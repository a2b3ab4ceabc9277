"""The three MirrorMaker 2 connectors, as they run inside one mirror's Spark application."""
