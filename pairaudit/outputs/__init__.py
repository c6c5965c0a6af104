"""The output folder (``--out``): every file a scan writes there, its writer and its reader.

- :mod:`.folder`: the atomic, ownership-aware folder (``OutputDir``), output names, findings / JSON writers;
- :mod:`.records`: ``clean.<ext>`` and ``dropped.<ext>``;
- :mod:`.reader`: reading a finished output folder back (``OutputFolder``).
"""
