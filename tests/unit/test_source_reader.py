"""The source connector's DataFrame readers and real-time mode's hand-off of the slot source's records."""

from pathlib import Path

from spark_runtime import real_time, source_reader

JAVA_SOURCES = Path(__file__).resolve().parents[2] / "spark_runtime/java/src/main/java/io/mirrorplane/spark"
JAVA_COLUMNS = JAVA_SOURCES / "KafkaMirrorWriter.java"


class Stream:
    """Spark's DataStreamReader as far as the readers use it: the format and options it was given."""

    def __init__(self) -> None:
        self.source: str | None = None
        self.options: dict[str, str] = {}

    def format(self, source: str) -> "Stream":
        self.source = source
        return self

    def option(self, key: str, value: object) -> "Stream":
        self.options[key] = str(value)
        return self


class Spark:
    def __init__(self) -> None:
        self.readStream = Stream()


class Frame:
    def __init__(self) -> None:
        self.selected: tuple[str, ...] = ()

    def select(self, *columns: str) -> "Frame":
        self.selected = columns
        return self


def test_the_slot_source_hands_its_records_off():
    spark = Spark()
    source_reader.reader(spark, ["b", "a"], "earliest", {"kafka.fetch.min.bytes": "1"}, slots=2)
    assert spark.readStream.source == real_time.SLOT_SOURCE
    assert spark.readStream.options == {"topics": "b,a", "slots": "2", "startingOffsets": "earliest",
                                        "handOff": "true", "kafka.fetch.min.bytes": "1"}


def test_sparks_kafka_source_keeps_whole_rows():
    spark = Spark()
    source_reader.reader(spark, ["a"], "latest", {}, max_records=10_000)
    assert spark.readStream.source == "kafka"
    assert "handOff" not in spark.readStream.options
    assert spark.readStream.options["includeHeaders"] == "true"
    assert spark.readStream.options["maxOffsetsPerTrigger"] == "10000"


def test_the_hand_off_keeps_the_columns_the_sink_recognises():
    frame = Frame()
    assert real_time.hand_off(frame) is frame
    assert frame.selected == ("partition", "offset")
    quoted = ", ".join(f'"{column}"' for column in real_time.HAND_OFF_COLUMNS)
    assert f"HAND_OFF_COLUMNS = List.of({quoted})" in JAVA_COLUMNS.read_text()
