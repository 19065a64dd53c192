"""erahbo's Hydra sweeper: ``defaults: - override hydra/sweeper: erahbo``.

See docs/integrations/hydra.md. Hydra finds the sweeper by scanning the ``hydra_plugins``
namespace package (no ``__init__.py`` there): :mod:`.config` registers the config,
:mod:`.erahbo_sweeper` holds the ``Sweeper`` class.
"""
